// Loading row policies from shared objects (see rowprobe/row_policy_plugin.hpp): dlopen, the
// entry point, and the ABI checks, each failure a ConfigError that names the file.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/process_plugin_library.hpp"
#include "rowprobe/row_policy_plugin.hpp"

namespace rowprobe {

namespace {

[[noreturn]] void fail(const std::string& component, const std::string& option,
                       const std::string& path, const std::string& problem) {
    throw ConfigError(
        {.component = component, .option = option, .value = path, .problem = problem});
}

std::string hex(std::uint64_t v) {
    std::ostringstream out;
    out << "0x" << std::hex << v;
    return out.str();
}

/// One line of /proc/self/maps: [begin, end) and its permissions.
struct Mapping {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    bool readable = false;
    bool executable = false;
};

std::vector<Mapping> mappings() {
    std::vector<Mapping> out;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        Mapping m;
        char perms[5] = {};
        unsigned long long b = 0;
        unsigned long long e = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %4s", &b, &e, perms) != 3) continue;
        m.begin = static_cast<std::uintptr_t>(b);
        m.end = static_cast<std::uintptr_t>(e);
        m.readable = perms[0] == 'r';
        m.executable = perms[2] == 'x';
        out.push_back(m);
    }
    return out;
}

/// The address of function pointer `f`, for isExecutable.
template <class F>
const void* codeAddress(F f) noexcept {
    const void* p = nullptr;
    static_assert(sizeof(f) == sizeof(p));
    std::memcpy(&p, &f, sizeof(p));
    return p;
}

/// True when `p` lies in an executable mapping (a function, not data).
bool isExecutable(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const Mapping& m : mappings()) {
        if (a >= m.begin && a < m.end) return m.executable;
    }
    return false;
}

/// True when every byte of [p, p + n) is in readable mappings (before the loader reads a
/// descriptor a library handed it: one ending at an unmapped page would crash rowprobe).
bool isReadable(const void* p, std::size_t n) {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t end = a + n;
    if (p == nullptr || end < a) return false;
    const std::vector<Mapping> maps = mappings();  // ascending, as the kernel lists them
    for (const Mapping& m : maps) {
        if (a >= m.begin && a < m.end) {
            if (!m.readable) return false;
            a = m.end;
            if (a >= end) return true;
        }
    }
    return false;
}

/// A library file or its directory that anyone may write to would let anyone run code inside
/// rowprobe: refused (like ssh's StrictModes). A directory reached through a symbolic link is
/// only warned about (merged-/usr systems link /lib to /usr/lib).
void checkLibraryPlace(const std::string& component, const std::string& option,
                       const std::string& path) {
    const std::size_t slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? std::string(".") : (slash == 0 ? "/" : path.substr(0, slash));
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0) {
        fail(component, option, path,
             "refusing the library '" + path +
                 "': anyone may write to it (chmod o-w it, or install it where only root writes)");
    }
    if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0) {
        fail(component, option, path,
             "refusing the library '" + path + "': its directory '" + dir +
                 "' is writable by anyone (use a directory only root writes, e.g. "
                 "/usr/local/lib/rowprobe)");
    }
    struct stat link {};
    if (::lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
        std::cerr << "rowprobe: warning: the directory of plugin library '" << path
                  << "' is a symbolic link; rowprobe loads what it points to\n"
                  << std::flush;
    }
}

}  // namespace

LoadedRowPolicy loadRowPolicyLibrary(const std::string& path, const std::string& component,
                                     const std::string& option) {
    static std::mutex mutex;  // start-up only, but tests may load from several threads
    static std::map<std::string, const RowPolicyDescriptor*> loaded;
    const std::lock_guard lock(mutex);
    if (auto it = loaded.find(path); it != loaded.end()) return {path, it->second};

    // RTLD_NOW: an unresolved symbol is reported here, not as a crash on the first packet.
    // RTLD_LOCAL: the library's own symbols do not leak into later libraries.
    checkLibraryPlace(component, option, path);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        fail(component, option, path,
             "cannot load row policy library: " +
                 std::string(why != nullptr ? why : "unknown dlopen error"));
    }
    ::dlerror();
    void* sym = ::dlsym(handle, kRowPolicyEntryPoint);
    if (sym == nullptr) {
        fail(component, option, path,
             "'" + path + "' is not a rowprobe row policy library: it does not export '" +
                 std::string(kRowPolicyEntryPoint) +
                 "' (define the policy with ROWPROBE_EXPORT_ROW_POLICY)");
    }
    if (!isExecutable(sym)) {
        fail(component, option, path,
             "'" + path + "' is not a rowprobe row policy library: its '" +
                 std::string(kRowPolicyEntryPoint) + "' is data, not a function");
    }
    RowPolicyEntryPoint entry = nullptr;
    static_assert(sizeof(entry) == sizeof(sym));
    std::memcpy(&entry, &sym, sizeof(entry));  // object pointer → function pointer, as POSIX allows
    const void* raw = entry();
    if (raw == nullptr)
        fail(component, option, path,
             "the library's " + std::string(kRowPolicyEntryPoint) + "() returned null");
    if (!isReadable(raw, sizeof(std::uint32_t))) {
        fail(component, option, path,
             "the library's " + std::string(kRowPolicyEntryPoint) +
                 "() returned a pointer to unreadable memory");
    }

    std::uint32_t abi = 0;
    std::memcpy(&abi, raw, sizeof(abi));  // the first member of every descriptor version
    if (abi != kRowPolicyAbiVersion) {
        fail(component, option, path,
             "row policy library '" + path + "' was built for row-policy ABI " +
                 std::to_string(abi) + ", this rowprobe provides ABI " +
                 std::to_string(kRowPolicyAbiVersion) +
                 "; rebuild it against this rowprobe's SDK headers");
    }
    if (!isReadable(raw, sizeof(RowPolicyDescriptor))) {
        fail(component, option, path,
             "row policy library '" + path + "' has a descriptor that ends in unmapped memory (" +
                 std::to_string(sizeof(RowPolicyDescriptor)) +
                 " bytes expected); rebuild it against this rowprobe's SDK headers");
    }
    const auto* d = static_cast<const RowPolicyDescriptor*>(raw);
    if (d->descriptorSize != sizeof(RowPolicyDescriptor)) {
        fail(component, option, path,
             "row policy library '" + path + "' has a descriptor of " +
                 std::to_string(d->descriptorSize) + " bytes, expected " +
                 std::to_string(sizeof(RowPolicyDescriptor)) +
                 "; rebuild it against this rowprobe's SDK headers");
    }
    if (d->sdkLayout != sdkLayoutFingerprint()) {
        fail(component, option, path,
             "row policy library '" + path + "' was built against different SDK headers (layout " +
                 hex(d->sdkLayout) + ", this rowprobe " + hex(sdkLayoutFingerprint()) +
                 "); rebuild it against this rowprobe's SDK headers");
    }
    if (d->name == nullptr || !isReadable(d->name, 1) || *d->name == '\0' ||
        d->factory == nullptr || !isExecutable(codeAddress(d->factory))) {
        fail(component, option, path,
             "row policy library '" + path + "' has no policy name or no factory");
    }
    loaded.emplace(path, d);
    return {path, d};
}

std::string findRowPolicyLibrary(const std::string& name, const std::vector<std::string>& dirs) {
    const std::string libraryFile = "/librowprobe-policy-" + name + ".so";
    const std::string plainFile = "/" + name + ".so";
    for (const auto& dir : dirs) {
        for (const std::string& file : {dir + libraryFile, dir + plainFile}) {
            struct stat st {};
            if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return file;
        }
    }
    return {};
}

std::vector<std::string> splitSearchPath(const std::string& path) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = path.find(':', start);
        const std::string item =
            path.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!item.empty()) out.push_back(item);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

bool isPluginLibraryName(std::string_view name) noexcept {
    return name.find('/') != std::string_view::npos ||
           (name.size() > 3 && name.substr(name.size() - 3) == ".so");
}

const ProcessPluginDescriptor& loadProcessPluginLibrary(const std::string& path) {
    static std::mutex mutex;
    static std::map<std::string, const ProcessPluginDescriptor*> loaded;
    const std::lock_guard lock(mutex);
    if (auto it = loaded.find(path); it != loaded.end()) return *it->second;
    const std::string component = "process '" + path + "'";
    checkLibraryPlace(component, "", path);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        fail(component, "", path,
             "cannot load process plugin library: " +
                 std::string(why != nullptr ? why : "unknown dlopen error"));
    }
    ::dlerror();
    void* sym = ::dlsym(handle, kProcessPluginEntryPoint);
    if (sym == nullptr) {
        fail(component, "", path,
             "'" + path + "' is not a rowprobe process plugin library: it does not export '" +
                 std::string(kProcessPluginEntryPoint) +
                 "' (define the plugin with ROWPROBE_EXPORT_PROCESS_PLUGIN)");
    }
    if (!isExecutable(sym)) {
        fail(component, "", path,
             "'" + path + "' is not a rowprobe process plugin library: its '" +
                 std::string(kProcessPluginEntryPoint) + "' is data, not a function");
    }
    ProcessPluginEntryPoint entry = nullptr;
    static_assert(sizeof(entry) == sizeof(sym));
    std::memcpy(&entry, &sym, sizeof(entry));
    const void* raw = entry();
    if (raw == nullptr) fail(component, "", path, "the library's entry point returned null");
    if (!isReadable(raw, sizeof(std::uint32_t)))
        fail(component, "", path, "the library's entry point returned unreadable memory");
    std::uint32_t abi = 0;
    std::memcpy(&abi, raw, sizeof(abi));
    if (abi != kProcessPluginAbiVersion) {
        fail(component, "", path,
             "process plugin library '" + path + "' was built for process-plugin ABI " +
                 std::to_string(abi) + ", this rowprobe provides ABI " +
                 std::to_string(kProcessPluginAbiVersion) +
                 "; rebuild it against this rowprobe's SDK headers");
    }
    if (!isReadable(raw, sizeof(ProcessPluginDescriptor))) {
        fail(component, "", path,
             "process plugin library '" + path +
                 "' has a descriptor that ends in unmapped memory; rebuild it against this "
                 "rowprobe's SDK headers");
    }
    const auto* d = static_cast<const ProcessPluginDescriptor*>(raw);
    if (d->descriptorSize != sizeof(ProcessPluginDescriptor) ||
        d->sdkLayout != processSdkLayoutFingerprint()) {
        fail(component, "", path,
             "process plugin library '" + path +
                 "' was built against different SDK headers "
                 "(layout " +
                 hex(d->sdkLayout) + ", this rowprobe " + hex(processSdkLayoutFingerprint()) +
                 "); rebuild it against this rowprobe's SDK headers");
    }
    if (d->name == nullptr || !isReadable(d->name, 1) || *d->name == '\0' ||
        d->factory == nullptr || !isExecutable(codeAddress(d->factory))) {
        fail(component, "", path, "process plugin library '" + path + "' has no name or factory");
    }
    loaded.emplace(path, d);
    return *d;
}

}  // namespace rowprobe
