#include "filter_table.h"

namespace radiance::jinja::detail {

FilterFn find_filter(std::string_view name) {
    static const FilterTable table = [] {
        FilterTable t;
        add_text_filters(t);
        add_sequence_filters(t);
        add_value_filters(t);
        return t;
    }();
    const auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

bool filter_needs_context(std::string_view name) {
    return name == "map" || name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr";
}

}  // namespace radiance::jinja::detail
