// Filters over sequences and mappings. Like Jinja, select/reject/map/unique/items/
// batch/slice return one-shot iterators (truthy, no length) rather than lists.
#include <algorithm>

#include "attributes.h"
#include "call_args.h"
#include "evaluator.h"
#include "filter_table.h"
#include "operators.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

[[noreturn]] void runtime(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

Value ignore_case(const Value& v) { return v.is_string() ? Value(py_lower(v.as_string())) : v; }

Value f_length(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("length", a);
    return Value(static_cast<int64_t>(py_len(v)));
}

Value f_list(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("list", a);
    return Value::list(iterate(v));
}

Value f_first(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("first", a);
    if (v.is_object())
        if (auto* it = dynamic_cast<Iterator*>(v.as_object())) {
            Value x;
            return it->next(x) ? x : Value::undefined("No first item, sequence was empty.");
        }
    const ValueList items = iterate(v);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("last", a);
    if (!v.is_undefined() && !v.is_string() && !v.is_list() && !v.is_dict()) runtime("'" + type_name(v) + "' object is not reversible");
    const ValueList items = iterate(v);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_join(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("join", args, {{"d", Value("")}, {"attribute", Value::none()}});
    const std::string sep = to_str(a[0]);
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
        if (!first) out += sep;
        first = false;
        append_str(out, a[1].is_none() ? item : get_attribute_path(item, a[1]));
        ev.check_string_size(out.size());
    }
    return Value(out);
}

Value f_reverse(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("reverse", a);
    if (v.is_string()) {
        std::u32string cps = to_u32(v.as_string());
        std::reverse(cps.begin(), cps.end());
        return Value(to_utf8(cps));
    }
    ValueList items = iterate(v);
    std::reverse(items.begin(), items.end());
    if (v.is_list()) {
        switch (v.seq_kind()) {
        case Value::SeqKind::List: return make_iterator(std::move(items), "list_reverseiterator");
        case Value::SeqKind::Range: return make_iterator(std::move(items), "range_iterator");
        case Value::SeqKind::Tuple: return make_iterator(std::move(items), "reversed");
        case Value::SeqKind::DictItems: return make_iterator(std::move(items), "dict_reverseitemiterator");
        case Value::SeqKind::DictValues: return make_iterator(std::move(items), "dict_reversevalueiterator");
        case Value::SeqKind::DictKeys: return make_iterator(std::move(items), "dict_reversekeyiterator");
        }
    }
    if (v.is_dict()) return make_iterator(std::move(items), "dict_reversekeyiterator");
    if (v.is_object()) return Value::list(std::move(items));  // reversed() fails on iterators; Jinja lists them
    return make_iterator(std::move(items), "reversed");
}

// sort(reverse=False, case_sensitive=False, attribute=None); attribute may list
// several comma-separated keys.
Value f_sort(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("sort", args, {{"reverse", Value(false)}, {"case_sensitive", Value(false)}, {"attribute", Value::none()}});
    const bool reverse = truthy(a[0]);
    const bool case_sensitive = truthy(a[1]);
    std::vector<Value> paths;
    if (a[2].is_string()) {
        const std::string& s = a[2].as_string();
        size_t start = 0;
        while (true) {
            const size_t comma = s.find(',', start);
            paths.emplace_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    } else {
        paths.push_back(a[2]);
    }
    ValueList items = iterate(v);
    std::vector<std::pair<Value, size_t>> keyed;
    keyed.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        ValueList key;
        for (const Value& p : paths) {
            Value k = get_attribute_path(items[i], p);
            key.push_back(case_sensitive ? k : ignore_case(k));
        }
        keyed.emplace_back(Value::list(std::move(key)), i);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        ev.tick();
        return reverse ? py_less(y.first, x.first) : py_less(x.first, y.first);
    });
    ValueList out;
    out.reserve(items.size());
    for (const auto& k : keyed) out.push_back(items[k.second]);
    return Value::list(std::move(out));
}

Value f_dictsort(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("dictsort", args, {{"case_sensitive", Value(false)}, {"by", Value("key")}, {"reverse", Value(false)}});
    if (!v.is_dict()) runtime("'" + type_name(v) + "' object has no attribute 'items'");
    const std::string by = to_str(a[1]);
    if (by != "key" && by != "value") runtime("You can only sort by either \"key\" or \"value\"");
    const bool case_sensitive = truthy(a[0]);
    const bool reverse = truthy(a[2]);
    std::vector<std::pair<Value, Value>> items(v.as_dict().begin(), v.as_dict().end());
    auto key = [&](const std::pair<Value, Value>& kv) {
        const Value& k = by == "key" ? kv.first : kv.second;
        return case_sensitive ? k : ignore_case(k);
    };
    std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) {
        ev.tick();
        return reverse ? py_less(key(y), key(x)) : py_less(key(x), key(y));
    });
    ValueList out;
    for (auto& [k, val] : items) out.push_back(Value::tuple({k, val}));
    return Value::list(std::move(out));
}

Value f_unique(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("unique", args, {{"case_sensitive", Value(false)}, {"attribute", Value::none()}});
    ValueList seen;
    ValueList out;
    for (const Value& item : iterate(v)) {
        Value key = get_attribute_path(item, a[1]);
        if (!truthy(a[0])) key = ignore_case(key);
        require_hashable(key);
        bool dup = false;
        for (const Value& s : seen) {
            ev.tick();
            if (py_equal(s, key)) {
                dup = true;
                break;
            }
        }
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return make_iterator(std::move(out));
}

Value min_max(Evaluator&, const Value& v, const Args& args, bool want_max) {
    auto a = bind_args(want_max ? "max" : "min", args, {{"case_sensitive", Value(false)}, {"attribute", Value::none()}});
    const ValueList items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    auto key = [&](const Value& item) {
        Value k = get_attribute_path(item, a[1]);
        return truthy(a[0]) ? k : ignore_case(k);
    };
    size_t best = 0;
    Value best_key = key(items[0]);
    for (size_t i = 1; i < items.size(); ++i) {
        Value k = key(items[i]);
        if (want_max ? py_less(best_key, k) : py_less(k, best_key)) {
            best = i;
            best_key = k;
        }
    }
    return items[best];
}
Value f_min(Evaluator& ev, const Value& v, const Args& a) { return min_max(ev, v, a, false); }
Value f_max(Evaluator& ev, const Value& v, const Args& a) { return min_max(ev, v, a, true); }

Value f_sum(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("sum", args, {{"attribute", Value::none()}, {"start", Value(0)}});
    if (a[1].is_string()) runtime("sum() can't sum strings [use ''.join(seq) instead]");
    Value total = a[1];
    for (const Value& item : iterate(v)) total = binary_op(ev, Op::Add, total, get_attribute_path(item, a[0]));
    return total;
}

// map('filter', args...) or map(attribute='x', default=y)
Value f_map(Evaluator& ev, const Value& v, const Args& args) {
    if (!truthy(v)) return make_iterator({});
    ValueList out;
    const bool by_attribute = args.positional.empty() &&
                              std::any_of(args.keyword.begin(), args.keyword.end(), [](const auto& kw) { return kw.first == "attribute"; });
    if (by_attribute) {
        Value attribute, dflt = Value::none();
        for (const auto& [k, val] : args.keyword) {
            if (k == "attribute")
                attribute = val;
            else if (k == "default")
                dflt = val;
            else
                runtime("Unexpected keyword argument '" + k + "'");
        }
        for (const Value& item : iterate(v)) {
            Value x = get_attribute_path(item, attribute);
            out.push_back(x.is_undefined() && !dflt.is_none() ? dflt : x);
        }
        return make_iterator(std::move(out));
    }
    if (args.positional.empty()) runtime("map requires a filter argument");
    const std::string name = to_str(args.positional[0]);
    Args rest{ValueList(args.positional.begin() + 1, args.positional.end()), args.keyword};
    for (const Value& item : iterate(v)) out.push_back(ev.apply_filter(name, item, rest));
    return make_iterator(std::move(out));
}

// select/reject/selectattr/rejectattr: an optional attribute, then an optional test
// name with its arguments; without a test the item's truthiness decides.
Value select_or_reject(Evaluator& ev, const Value& v, const Args& args, bool keep_when, bool lookup_attr, const char* fn) {
    if (!truthy(v)) return make_iterator({});
    size_t off = 0;
    Value attribute;
    if (lookup_attr) {
        if (args.positional.empty()) runtime(std::string(fn) + ": Missing parameter for attribute name");
        attribute = args.positional[0];
        off = 1;
    }
    const bool has_test = args.positional.size() > off;
    const std::string test = has_test ? to_str(args.positional[off]) : "";
    Args rest;
    if (has_test) rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(off) + 1, args.positional.end());
    rest.keyword = args.keyword;
    ValueList out;
    for (const Value& item : iterate(v)) {
        const Value x = lookup_attr ? get_attribute_path(item, attribute) : item;
        const bool passed = has_test ? ev.apply_test(test, x, rest) : truthy(x);
        if (passed == keep_when) out.push_back(item);
    }
    return make_iterator(std::move(out));
}
Value f_select(Evaluator& ev, const Value& v, const Args& a) { return select_or_reject(ev, v, a, true, false, "select"); }
Value f_reject(Evaluator& ev, const Value& v, const Args& a) { return select_or_reject(ev, v, a, false, false, "reject"); }
Value f_selectattr(Evaluator& ev, const Value& v, const Args& a) { return select_or_reject(ev, v, a, true, true, "selectattr"); }
Value f_rejectattr(Evaluator& ev, const Value& v, const Args& a) { return select_or_reject(ev, v, a, false, true, "rejectattr"); }

Value f_items(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("items", a);
    if (v.is_undefined()) return make_iterator({});
    if (!v.is_dict()) runtime("Can only get item pairs from a mapping.");
    ValueList out;
    for (const auto& [k, val] : v.as_dict()) out.push_back(Value::tuple({k, val}));
    return make_iterator(std::move(out));
}

Value f_batch(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("batch", args, {{"linecount", Value(), true}, {"fill_with", Value::none()}});
    const int64_t n = int_arg("batch", a[0]);
    ValueList out, tmp;
    for (const Value& item : iterate(v)) {
        if (static_cast<int64_t>(tmp.size()) == n) {
            out.push_back(Value::list(std::move(tmp)));
            tmp.clear();
        }
        tmp.push_back(item);
    }
    if (!tmp.empty()) {
        if (!a[1].is_none() && static_cast<int64_t>(tmp.size()) < n) {
            ev.check_list_size(static_cast<size_t>(n));
            tmp.resize(static_cast<size_t>(n), a[1]);
        }
        out.push_back(Value::list(std::move(tmp)));
    }
    return make_iterator(std::move(out));
}

Value f_slice(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("slice", args, {{"slices", Value(), true}, {"fill_with", Value::none()}});
    const int64_t slices = int_arg("slice", a[0]);
    const ValueList seq = iterate(v);
    if (slices == 0) runtime("integer division or modulo by zero");
    ev.check_list_size(static_cast<size_t>(std::max<int64_t>(slices, 0)));
    const auto length = static_cast<int64_t>(seq.size());
    const int64_t per = length / slices;
    const int64_t extra = length % slices;
    int64_t offset = 0;
    ValueList out;
    for (int64_t k = 0; k < slices; ++k) {
        const int64_t start = offset + k * per;
        if (k < extra) ++offset;
        const int64_t end = offset + (k + 1) * per;
        ValueList tmp;
        for (int64_t i = std::max<int64_t>(start, 0); i < std::min(end, length); ++i) tmp.push_back(seq[static_cast<size_t>(i)]);
        if (!a[1].is_none() && k >= extra) tmp.push_back(a[1]);
        out.push_back(Value::list(std::move(tmp)));
    }
    return make_iterator(std::move(out));
}

}  // namespace

void add_sequence_filters(FilterTable& t) {
    t["length"] = f_length;
    t["count"] = f_length;
    t["list"] = f_list;
    t["first"] = f_first;
    t["last"] = f_last;
    t["join"] = f_join;
    t["reverse"] = f_reverse;
    t["sort"] = f_sort;
    t["dictsort"] = f_dictsort;
    t["unique"] = f_unique;
    t["min"] = f_min;
    t["max"] = f_max;
    t["sum"] = f_sum;
    t["map"] = f_map;
    t["select"] = f_select;
    t["reject"] = f_reject;
    t["selectattr"] = f_selectattr;
    t["rejectattr"] = f_rejectattr;
    t["items"] = f_items;
    t["batch"] = f_batch;
    t["slice"] = f_slice;
}

}  // namespace radiance::jinja::detail
