// Stand-in for the ndpi process plugin in a build without nDPI (ROWPROBE_WITH_NDPI=OFF, or no
// libndpi at build time): `-p ndpi` stops start-up with exit code 2 and says how to get it.
#include <span>
#include <string_view>

#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ndpi {

namespace {

class NdpiUnavailable final : public ProcessPluginBase<NdpiUnavailable> {
public:
    explicit NdpiUnavailable(const Options& options) {
        throw ConfigError({.component = "process 'ndpi'",
                           .value = "ndpi",
                           .problem = "rowprobe was built without nDPI (ROWPROBE_WITH_NDPI=OFF or "
                                      "libndpi-dev missing at build time); install libndpi-dev "
                                      "and rebuild with -DROWPROBE_WITH_NDPI=ON",
                           .source = options.source()});
    }
    std::string_view name() const noexcept override { return "ndpi"; }
    std::span<const FieldSpec> fields() const noexcept override { return {}; }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, NdpiUnavailable,
                         {.name = "ndpi",
                          .summary = "not in this build: rowprobe was built without nDPI",
                          .options = {}});

}  // namespace rowprobe::ndpi
