#include "output/common/parallel_format.hpp"

#include <sched.h>

#include <algorithm>

namespace rowprobe::output {

unsigned formatThreads(const Options& options, std::string_view option) {
    const auto wanted = static_cast<unsigned>(options.getInt(option));
    if (options.explicitlySet(option)) return wanted;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return wanted;
    return std::clamp(static_cast<unsigned>(CPU_COUNT(&allowed)), 1U, wanted);
}

}  // namespace rowprobe::output
