#include "radiance/jinja/template.h"

#include "evaluator.h"
#include "parser.h"
#include "radiance/jinja/json_convert.h"

namespace radiance::jinja {

Template::Template(std::string_view source, Options options) : options_(std::move(options)) {
    detail::ParserOptions po;
    po.lexer.trim_blocks = options_.trim_blocks;
    po.lexer.lstrip_blocks = options_.lstrip_blocks;
    po.lexer.keep_trailing_newline = options_.keep_trailing_newline;
    po.enable_do = options_.enable_do;
    parsed_ = detail::parse_template(source, po);
}

std::string Template::render(const Value& context) const {
    if (!context.is_dict() && !context.is_undefined() && !context.is_none())
        throw Error(Error::Kind::Runtime, "the template context must be a dict");
    try {
        detail::Evaluator ev(*parsed_, options_);
        return ev.render(context);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {  // e.g. std::bad_alloc
        throw Error(Error::Kind::Runtime, e.what());
    }
}

std::string Template::render(const nlohmann::ordered_json& context) const { return render(from_json(context)); }
std::string Template::render(const nlohmann::json& context) const { return render(from_json(context)); }

}  // namespace radiance::jinja
