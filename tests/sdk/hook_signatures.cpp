// Compiled by tests/sdk/check_compile.cmake, once per case: without a ROWPROBE_CASE_* macro the
// plugin below is correct and must compile; each macro plants one mistake a plugin writer makes
// (a wrong signature on a hook's name, ipfixprobe's name of a hook, a hook rowprobe lacks), and
// the compile must fail with a message naming the hook (ProcessPluginBase's checks in
// rowprobe/process.hpp). Before those checks, every one of these plugins compiled and the
// mistaken hook was silently never called. The class is `final`, as rowprobe's plugins are;
// ROWPROBE_CASE_NOT_FINAL drops that (the checks find a member's name differently then, and
// only then see private and overloaded hooks).
#include <cstdint>
#include <span>
#include <string_view>

#include "rowprobe/process.hpp"

namespace {

using namespace rowprobe;

struct State {
    std::uint32_t packets;
};
struct Ext {
    std::uint64_t sizes[8];
};

#if defined(ROWPROBE_CASE_NOT_FINAL)
class ExamplePlugin : public ProcessPluginBase<ExamplePlugin> {
#else
class ExamplePlugin final : public ProcessPluginBase<ExamplePlugin> {
#endif
public:
    using State = ::State;
    using Ext = ::Ext;

    std::string_view name() const noexcept override { return "example"; }
    std::span<const FieldSpec> fields() const noexcept override { return {}; }

#if defined(ROWPROBE_CASE_POST_CREATE_NOT_CONST)
    HookResult postCreate(FlowContext& /*ctx*/) noexcept { return kContinue; }
#elif defined(ROWPROBE_CASE_POST_CREATE_PRIVATE)
#else
HookResult postCreate(FlowContext& ctx) const noexcept {
    ctx.stateAs<State>().packets = 1;
    return kContinue;
}
#endif

#if defined(ROWPROBE_CASE_PRE_UPDATE_RETURNS_BOOL)
    bool preUpdate(FlowContext& /*ctx*/) const noexcept { return false; }
#elif defined(ROWPROBE_CASE_PRE_UPDATE_IPFIXPROBE_NAME)
    int pre_update(FlowContext& /*ctx*/) const noexcept { return 0; }  // NOLINT
#endif

#if defined(ROWPROBE_CASE_POST_UPDATE_NOT_NOEXCEPT)
    HookResult postUpdate(FlowContext& /*ctx*/) const { return kContinue; }
#else
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        ++ctx.stateAs<State>().packets;
        return kContinue;
    }
#endif

#if defined(ROWPROBE_CASE_PRE_EXPORT_EXTRA_PARAMETER)
    void preExport(FlowContext& /*ctx*/, bool /*flushed*/) const noexcept {}
#endif

#if defined(ROWPROBE_CASE_WRITE_WITHOUT_WRITER)
    void write(FlowContext& /*ctx*/) const noexcept {}
#else
    void write(FlowContext& /*ctx*/, InstanceWriter& /*out*/) const noexcept {}
#endif

#if defined(ROWPROBE_CASE_TOUCH_BY_POINTER)
    std::uint64_t touch(const Ext* ext) const noexcept { return ext->sizes[0]; }
#else
    std::uint64_t touch(const Ext& ext) const noexcept { return ext.sizes[0]; }
#endif

#if defined(ROWPROBE_CASE_PRE_CREATE)
    HookResult preCreate(FlowContext& /*ctx*/) const noexcept { return kContinue; }
#endif

#if defined(ROWPROBE_CASE_POST_CREATE_PRIVATE)
private:
    HookResult postCreate(FlowContext& /*ctx*/) const noexcept { return kContinue; }
#endif
};

}  // namespace

ProcessHooks exampleHooks() {
    static const ExamplePlugin plugin;
    return plugin.hooks();
}
