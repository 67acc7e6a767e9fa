#include "checked_json.h"

#include "radiance/util/error.h"

#include <cmath>

namespace radiance::convert {

namespace {
std::string shown(const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }
}  // namespace

double checked_real(const nlohmann::json& v, const std::string& what, bool positive) {
    const double x = v.is_number() ? v.get<double>() : std::nan("");
    if (!std::isfinite(x) || (positive && x <= 0))
        throw Error(what + " is " + shown(v) + ", not a " + (positive ? "positive " : "") + "number");
    return x;
}

int64_t checked_count(const nlohmann::json& v, const std::string& what, int64_t lo) {
    const bool ok = v.is_number_unsigned() ? v.get<uint64_t>() < (uint64_t{1} << 31) && static_cast<int64_t>(v.get<uint64_t>()) >= lo
                                           : v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() < (int64_t{1} << 31);
    if (!ok) throw Error(what + " is " + shown(v) + ", not an integer from " + std::to_string(lo) + " to 2^31 - 1");
    return v.get<int64_t>();
}

}  // namespace radiance::convert
