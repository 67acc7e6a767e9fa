// Attribute access, subscripts and iteration with the sandbox's rules: x.name tries
// the Python attribute (a method) first and then the item; x[key] tries the item
// first. Missing members are undefined; members of undefined are errors; methods that
// would mutate a list or dict are "unsafe" (an error once called), as in transformers'
// ImmutableSandboxedEnvironment.
#pragma once

#include <string>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

Value get_attribute(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step] on strings, lists and tuples; any of the three may be none.
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Jinja's make_attrgetter: "a.b.0" looks up a, then b, then index 0 (each with the
// subscript rules). A none/undefined path returns the item itself.
Value get_attribute_path(const Value& item, const Value& path);

// What `for x in v` visits: list items, dict keys, string characters; nothing for
// undefined. Throws for values Python cannot iterate.
ValueList iterate(const Value& v);
// Python's `item in container`.
bool contains(const Value& container, const Value& item);
// Python's len(); undefined has length 0.
size_t py_len(const Value& v);

// Bound methods of str, dict and list values (undefined when there is no such method).
Value string_method(const Value& self, const std::string& name);
Value dict_method(const Value& self, const std::string& name);
Value list_method(const Value& self, const std::string& name);
// The undefined value the sandbox returns for list.append, dict.update, ...
Value unsafe_attribute(const Value& obj, const std::string& name);

}  // namespace radiance::jinja::detail
