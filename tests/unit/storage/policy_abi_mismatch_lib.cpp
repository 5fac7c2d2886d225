// A row policy library built for a future ABI: loading it must fail with a clear ConfigError
// (policy_options_and_library_test.cpp). Built as a shared object by docs/examples/CMakeLists.txt.
#include "rowprobe/row_policy_plugin.hpp"

extern "C" __attribute__((visibility("default"))) const void* rowprobe_row_policy() {
    static const rowprobe::RowPolicyDescriptor descriptor{
        .abiVersion = rowprobe::kRowPolicyAbiVersion + 998,
        .name = "future",
        .summary = "built for another ABI",
    };
    return &descriptor;
}
