// Resource failures named precisely (issue 10, defect 6): which allocation failed and how much
// it asked for, and which thread could not be created, instead of a bare "std::bad_alloc" or
// an abort on std::system_error.
//
// The process-wide operator new (failure.cpp) records the size of the request that failed in
// a thread-local before it throws std::bad_alloc; an AllocationScope names what the current
// thread is building (a plugin, the packet blocks) so the message can say it. Neither costs
// anything on the packet path: a scope is set at start-up only, and a successful allocation
// does exactly what the default operator new does.
#pragma once

#include <cstddef>
#include <exception>
#include <string>

namespace rowprobe::core {

/// Names what the current thread allocates while the scope lives (nesting: the innermost).
/// Left by an exception, it keeps its name for describeFailure() further up.
class AllocationScope {
public:
    explicit AllocationScope(std::string what);
    ~AllocationScope();
    AllocationScope(const AllocationScope&) = delete;
    AllocationScope& operator=(const AllocationScope&) = delete;

private:
    std::string m_what;
    const std::string* m_previous;
    int m_uncaught;
};

/// The size of the last allocation that failed on this thread (0 if none).
std::size_t lastFailedAllocationBytes() noexcept;

/// One line for an exception: for std::bad_alloc "out of memory: cannot allocate 16.0 MiB
/// (16777216 bytes) for <scope>", for a std::system_error its text and code, else what().
std::string describeFailure(const std::exception& e);

}  // namespace rowprobe::core
