// String filters. Inputs go through str() first, as Jinja's soft_str does, so
// undefined becomes "" and numbers their Python text.
#include <algorithm>

#include "attributes.h"
#include "call_args.h"
#include "evaluator.h"
#include "filter_table.h"
#include "json_dump.h"
#include "py_strings.h"
#include "radiance/jinja/error.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

Value f_upper(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("upper", a);
    return Value(py_upper(to_str(v)));
}

Value f_lower(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("lower", a);
    return Value(py_lower(to_str(v)));
}

Value f_capitalize(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("capitalize", a);
    return Value(py_capitalize(to_str(v)));
}

// Jinja's title filter: words start after '-', whitespace or an opening bracket
// (unlike str.title(), "don't" stays "Don't").
Value f_title(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("title", a);
    const std::u32string cps = to_u32(to_str(v));
    auto is_break = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_py_space(c); };
    std::u32string out;
    bool word_start = true;
    for (char32_t c : cps) {
        if (is_break(c)) {
            out.push_back(c);
            word_start = true;
            continue;
        }
        if (word_start && c == 0xDF) {  // item[0].upper() of "ß" is "SS"
            out += U"SS";
        } else {
            out.push_back(word_start ? to_upper_cp(c) : to_lower_cp(c));
        }
        word_start = false;
    }
    return Value(to_utf8(out));
}

Value f_trim(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("trim", args, {{"chars", Value::none()}});
    if (a[0].is_none()) return Value(py_strip(to_str(v), nullptr, true, true));
    const std::u32string chars = to_u32(to_str(a[0]));
    return Value(py_strip(to_str(v), &chars, true, true));
}

Value f_replace(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("replace", args, {{"old", Value(), true}, {"new", Value(), true}, {"count", Value::none()}});
    const int64_t count = a[2].is_none() ? -1 : int_arg("replace", a[2]);
    return Value(py_replace(ev, to_str(v), to_str(a[0]), to_str(a[1]), count));
}

Value f_string(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("string", a);
    return Value(to_str(v));
}

// No autoescaping in chat templates, so Markup is plain text here.
Value f_safe(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("safe", a);
    return v.is_string() ? v : Value(to_str(v));
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&#34;"; break;
        case '\'': out += "&#39;"; break;
        default: out.push_back(c);
        }
    }
    return out;
}

Value f_escape(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("escape", a);
    return Value(html_escape(to_str(v)));
}

Value f_center(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("center", args, {{"width", Value(80)}});
    const int64_t width = int_arg("center", a[0]);
    const std::string s = to_str(v);
    const auto len = static_cast<int64_t>(code_point_count(s));
    if (width <= len) return Value(s);
    ev.check_string_size(static_cast<size_t>(width));
    const int64_t marg = width - len;
    const int64_t left = marg / 2 + (marg & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(marg - left), ' '));
}

Value f_indent(Evaluator& ev, const Value& v, const Args& args) {
    auto a = bind_args("indent", args, {{"width", Value(4)}, {"first", Value(false)}, {"blank", Value(false)}});
    // Jinja appends "\n" to the input without str(): only strings work.
    if (v.is_undefined()) fail_undefined(v);
    if (!v.is_string()) throw Error(Error::Kind::Runtime, "unsupported operand type(s) for +=: '" + type_name(v) + "' and 'str'");
    std::string indention;
    if (a[0].is_string()) {
        indention = a[0].as_string();
    } else {
        const int64_t w = int_arg("indent", a[0]);
        ev.check_string_size(static_cast<size_t>(std::max<int64_t>(w, 0)));
        indention = std::string(static_cast<size_t>(std::max<int64_t>(w, 0)), ' ');
    }
    // Jinja appends a newline first so that splitlines() keeps a trailing empty line.
    const std::vector<std::string> lines = py_splitlines(v.as_string() + "\n", false);
    std::string rv;
    if (truthy(a[2])) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i) rv += "\n" + indention;
            rv += lines[i];
        }
    } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) {
            rv += "\n";
            if (!lines[i].empty()) rv += indention;
            rv += lines[i];
            ev.check_string_size(rv.size());
        }
    }
    if (truthy(a[1])) rv = indention + rv;
    return Value(rv);
}

Value f_truncate(Evaluator&, const Value& v, const Args& args) {
    auto a =
        bind_args("truncate", args, {{"length", Value(255)}, {"killwords", Value(false)}, {"end", Value("...")}, {"leeway", Value(5)}});
    const int64_t length = int_arg("truncate", a[0]);
    if (!v.is_string()) {
        // Jinja measures len(s) without str(): only sized values get through, unchanged
        // when short enough.
        const int64_t leeway = a[3].is_none() ? 5 : int_arg("truncate", a[3]);
        if (static_cast<int64_t>(py_len(v)) <= length + leeway) return v;
        throw Error(Error::Kind::Runtime, "cannot truncate a " + type_name(v));
    }
    const std::u32string s = to_u32(v.as_string());
    const std::u32string end = to_u32(to_str(a[2]));
    const int64_t leeway = a[3].is_none() ? 5 : int_arg("truncate", a[3]);
    if (length < static_cast<int64_t>(end.size()))
        throw Error(Error::Kind::Runtime, "expected length >= " + std::to_string(end.size()) + ", got " + std::to_string(length));
    if (leeway < 0) throw Error(Error::Kind::Runtime, "expected leeway >= 0, got " + std::to_string(leeway));
    if (static_cast<int64_t>(s.size()) <= length + leeway) return Value(to_utf8(s));
    std::u32string head = s.substr(0, static_cast<size_t>(length) - end.size());
    if (!truthy(a[1])) {
        const size_t space = head.rfind(U' ');
        if (space != std::u32string::npos) head.resize(space);
    }
    return Value(to_utf8(head + end));
}

Value f_wordcount(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("wordcount", a);
    const std::string s = to_str(v);
    int64_t words = 0;
    bool in_word = false;
    for (size_t pos = 0; pos < s.size();) {
        const bool w = is_word_cp(next_code_point(s, pos));
        if (w && !in_word) ++words;
        in_word = w;
    }
    return Value(words);
}

Value f_format(Evaluator& ev, const Value& v, const Args& args) {
    if (!args.positional.empty() && !args.keyword.empty())
        throw Error(Error::Kind::Runtime, "can't handle positional and keyword arguments at the same time");
    Value operand;
    if (!args.keyword.empty()) {
        DictItems kw;
        for (const auto& [k, val] : args.keyword) kw.emplace_back(Value(k), val);
        operand = Value::dict(std::move(kw));
    } else {
        operand = Value::tuple(args.positional);
    }
    return Value(py_percent_format(ev, to_str(v), operand));
}

std::string unescape_entities(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out.push_back(s[i]);
            continue;
        }
        const size_t semi = s.find(';', i);
        if (semi == std::string::npos || semi - i > 10) {
            out.push_back('&');
            continue;
        }
        const std::string name = s.substr(i + 1, semi - i - 1);
        std::string rep;
        if (name == "amp")
            rep = "&";
        else if (name == "lt")
            rep = "<";
        else if (name == "gt")
            rep = ">";
        else if (name == "quot")
            rep = "\"";
        else if (name == "apos")
            rep = "'";
        else if (name == "nbsp")
            rep = "\xC2\xA0";
        else if (name.size() > 1 && name[0] == '#') {
            const bool hex = name[1] == 'x' || name[1] == 'X';
            const std::string digits = name.substr(hex ? 2 : 1);
            if (!digits.empty() && digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") == std::string::npos &&
                digits.size() < 8) {
                const auto cp = static_cast<char32_t>(std::stoul(digits, nullptr, hex ? 16 : 10));
                if (cp <= 0x10FFFF) append_utf8(rep, cp);
            }
        }
        if (rep.empty()) {
            out.push_back('&');
            continue;
        }
        out += rep;
        i = semi;
    }
    return out;
}

// Markup.striptags(): drop comments and tags, unescape entities, collapse whitespace.
Value f_striptags(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("striptags", a);
    const std::string s = to_str(v);
    std::string text;
    for (size_t i = 0; i < s.size();) {
        if (s.compare(i, 4, "<!--") == 0) {
            const size_t end = s.find("-->", i + 4);
            if (end != std::string::npos) {
                i = end + 3;
                continue;
            }
        }
        if (s[i] == '<') {
            const size_t end = s.find('>', i + 1);
            if (end != std::string::npos) {
                i = end + 1;
                continue;
            }
        }
        text.push_back(s[i++]);
    }
    const std::string unescaped = unescape_entities(text);
    std::string out;
    for (size_t pos = 0; pos < unescaped.size();) {
        const size_t start = pos;
        const char32_t c = next_code_point(unescaped, pos);
        if (is_py_space(c)) {
            if (!out.empty() && out.back() != ' ') out.push_back(' ');
        } else {
            out.append(unescaped, start, pos - start);
        }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return Value(out);
}

std::string url_quote(const std::string& s, bool for_qs) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' || c == '~' ||
            (!for_qs && c == '/')) {
            out.push_back(static_cast<char>(c));
        } else if (for_qs && c == ' ') {
            out.push_back('+');
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    return out;
}

Value f_urlencode(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("urlencode", a);
    if (v.is_string() || (!v.is_dict() && !v.is_list())) return Value(url_quote(to_str(v), false));
    std::string out;
    auto add = [&](const Value& k, const Value& val) {
        if (!out.empty()) out.push_back('&');
        out += url_quote(to_str(k), true) + "=" + url_quote(to_str(val), true);
    };
    if (v.is_dict()) {
        for (const auto& [k, val] : v.as_dict()) add(k, val);
    } else {
        for (const Value& pair : v.as_list()) {
            if (!pair.is_list() || pair.as_list().size() != 2) throw Error(Error::Kind::Runtime, "urlencode expects pairs");
            add(pair.as_list()[0], pair.as_list()[1]);
        }
    }
    return Value(out);
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
Value f_tojson(Evaluator& ev, const Value& v, const Args& args) {
    auto a =
        bind_args("tojson", args,
                  {{"ensure_ascii", Value(false)}, {"indent", Value::none()}, {"separators", Value::none()}, {"sort_keys", Value(false)}});
    JsonDumpOptions opts;
    opts.ensure_ascii = truthy(a[0]);
    if (a[1].is_string()) {
        opts.indent = a[1].as_string();
    } else if (!a[1].is_none()) {
        const int64_t n = int_arg("tojson", a[1]);
        ev.check_string_size(static_cast<size_t>(std::max<int64_t>(n, 0)));
        opts.indent = std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
    }
    if (opts.indent) opts.item_separator = ",";
    if (!a[2].is_none()) {
        const ValueList seps = a[2].as_list();
        if (!a[2].is_list() || seps.size() != 2 || !seps[0].is_string() || !seps[1].is_string())
            throw Error(Error::Kind::Runtime, "tojson separators must be a pair of strings");
        opts.item_separator = seps[0].as_string();
        opts.key_separator = seps[1].as_string();
    }
    opts.sort_keys = truthy(a[3]);
    std::string out = py_json_dumps(v, opts);
    ev.check_string_size(out.size());
    return Value(std::move(out));
}

// pprint.pformat prints short values exactly like repr().
Value f_pprint(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("pprint", a);
    return Value(to_repr(v));
}

}  // namespace

void add_text_filters(FilterTable& t) {
    t["upper"] = f_upper;
    t["lower"] = f_lower;
    t["capitalize"] = f_capitalize;
    t["title"] = f_title;
    t["trim"] = f_trim;
    t["replace"] = f_replace;
    t["string"] = f_string;
    t["safe"] = f_safe;
    t["escape"] = f_escape;
    t["e"] = f_escape;
    t["forceescape"] = f_escape;
    t["center"] = f_center;
    t["indent"] = f_indent;
    t["truncate"] = f_truncate;
    t["wordcount"] = f_wordcount;
    t["format"] = f_format;
    t["striptags"] = f_striptags;
    t["urlencode"] = f_urlencode;
    t["tojson"] = f_tojson;
    t["pprint"] = f_pprint;
}

}  // namespace radiance::jinja::detail
