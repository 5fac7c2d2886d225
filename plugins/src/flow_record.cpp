#include "rowprobe/flow_record.hpp"

namespace rowprobe {

std::string_view endReasonName(EndReason r) noexcept {
    switch (r) {
        case EndReason::InactiveTimeout:
            return "inactive";
        case EndReason::ActiveTimeout:
            return "active";
        case EndReason::EndOfFlow:
            return "end";
        case EndReason::ForcedEnd:
            return "forced";
        case EndReason::LackOfResources:
            return "resources";
    }
    return "unknown";
}

}  // namespace rowprobe
