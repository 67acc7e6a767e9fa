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

}  // namespace radiance::jinja::detail
