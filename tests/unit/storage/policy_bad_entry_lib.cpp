// Broken row policy libraries for the loader's checks (issue 21 item 13), built as shared objects
// by docs/examples/CMakeLists.txt: with ROWPROBE_BAD_ENTRY_DATA the entry symbol is data, not a
// function; otherwise the entry returns a descriptor whose ABI number matches but which ends
// 4 bytes later, at an unmapped page. Loading either must be a ConfigError, not a crash.
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "rowprobe/row_policy_plugin.hpp"

#ifdef ROWPROBE_BAD_ENTRY_DATA
extern "C" __attribute__((visibility("default"))) const char rowprobe_row_policy[64] = {1, 2, 3};
#else
extern "C" __attribute__((visibility("default"))) const void* rowprobe_row_policy() {
    auto* p = static_cast<std::uint8_t*>(
        ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return nullptr;
    ::munmap(p + 4096, 4096);
    const std::uint32_t abi = rowprobe::kRowPolicyAbiVersion;
    std::memcpy(p + 4096 - 4, &abi, sizeof abi);
    return p + 4096 - 4;
}
#endif
