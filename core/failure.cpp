#include "failure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <system_error>

namespace rowprobe::core {

namespace {

thread_local std::size_t t_failedBytes = 0;
thread_local const std::string* t_scope = nullptr;
thread_local std::string t_unwoundScope;  ///< the innermost scope an exception left

std::string formatBytes(std::size_t bytes) {
    char text[64];
    const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
    std::snprintf(text, sizeof text, "%.1f MiB (%zu bytes)", mib, bytes);
    return text;
}

}  // namespace

AllocationScope::AllocationScope(std::string what)
    : m_what(std::move(what)), m_previous(t_scope), m_uncaught(std::uncaught_exceptions()) {
    t_scope = &m_what;
    t_unwoundScope.clear();
}

AllocationScope::~AllocationScope() {
    t_scope = m_previous;
    if (std::uncaught_exceptions() > m_uncaught && t_unwoundScope.empty())
        t_unwoundScope = std::move(m_what);  // a move: no allocation while unwinding
}

std::size_t lastFailedAllocationBytes() noexcept { return t_failedBytes; }

std::string describeFailure(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
        std::string text = "out of memory: ";
        text += t_failedBytes != 0 ? "cannot allocate " + formatBytes(t_failedBytes)
                                   : std::string("an allocation failed");
        if (t_scope != nullptr) {
            text += " for " + *t_scope;
        } else if (!t_unwoundScope.empty()) {
            text += " for " + t_unwoundScope;
        }
        text += " (check ulimit -v and the memory available)";
        return text;
    }
    if (const auto* se = dynamic_cast<const std::system_error*>(&e); se != nullptr) {
        return std::string(se->what()) + " (" + se->code().category().name() + " error " +
               std::to_string(se->code().value()) + ")";
    }
    return e.what();
}

}  // namespace rowprobe::core

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ROWPROBE_SANITIZED_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ROWPROBE_SANITIZED_NEW 1
#endif

#ifndef ROWPROBE_SANITIZED_NEW
// The replaceable global allocation functions: the default behaviour (malloc, the new-handler
// loop, std::bad_alloc), plus the size of a request that failed. The matching operator delete
// is the default one (free).
namespace {

void* allocate(std::size_t bytes) {
    if (bytes == 0) bytes = 1;
    for (;;) {
        if (void* p = std::malloc(bytes)) return p;
        if (std::new_handler handler = std::get_new_handler(); handler != nullptr) {
            handler();
            continue;
        }
        rowprobe::core::t_failedBytes = bytes;
        throw std::bad_alloc();
    }
}

void* allocateAligned(std::size_t bytes, std::align_val_t alignment) {
    const auto align = static_cast<std::size_t>(alignment);
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
    for (;;) {
        if (void* p = std::aligned_alloc(align, rounded)) return p;
        if (std::new_handler handler = std::get_new_handler(); handler != nullptr) {
            handler();
            continue;
        }
        rowprobe::core::t_failedBytes = bytes;
        throw std::bad_alloc();
    }
}

}  // namespace

void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
// libstdc++'s aligned operator delete frees with free(), which fits aligned_alloc.
void* operator new(std::size_t bytes, std::align_val_t a) { return allocateAligned(bytes, a); }
void* operator new[](std::size_t bytes, std::align_val_t a) { return allocateAligned(bytes, a); }
#endif  // a sanitizer's own operator new (it pairs it with its operator delete) stays
