// recipe.cpp: the recipe language (recipe.h) and the presets.
#include "radiance/convert/recipe.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

// Each preset keeps the embeddings (gathers, read a row a token: the tokens' and, in GPT-2, the
// positions') and every norm and bias in bf16, as the brief for the presets has it, and quantises
// the matrices. int4 keeps an untied head at int8: the logits are the most sensitive product
// (llama.cpp's Q4_K_M keeps it at Q6_K). int4-gptq is int4 with GPTQ's codes (the same planes, so
// the same plugin serves it); it needs rad-convert --calib TEXT.
const std::pair<const char*, const char*> kPresets[] = {
    {"int8",
     "# preset int8: round-to-nearest int8 matrices, an f16 scale per 128 columns\n"
     "{token,position}_embd.weight  cast  dtype=bf16\n"
     "*{norm,bias}*                 cast  dtype=bf16\n"
     "*                             rtn   bits=8 group=128\n"},
    {"int4",
     "# preset int4: round-to-nearest int4 matrices with a zero point, an f16 scale per 128 columns;\n"
     "# an untied head at int8\n"
     "{token,position}_embd.weight  cast  dtype=bf16\n"
     "*{norm,bias}*                 cast  dtype=bf16\n"
     "output.weight                 rtn   bits=8 group=128\n"
     "*                             rtn   bits=4 group=128 zero=1\n"},
    {"fp8",
     "# preset fp8: OCP e4m3 matrices with an f32 scale per output channel\n"
     "{token,position}_embd.weight  cast  dtype=bf16\n"
     "*{norm,bias}*                 cast  dtype=bf16\n"
     "*                             fp8   block=0\n"},
    {"int4-gptq",
     "# preset int4-gptq: int4's encoding (zero point, an f16 scale per 128 columns), its codes chosen by\n"
     "# GPTQ from the model's own activations on rad-convert --calib TEXT; an untied head at int8 (rtn)\n"
     "{token,position}_embd.weight  cast  dtype=bf16\n"
     "*{norm,bias}*                 cast  dtype=bf16\n"
     "output.weight                 rtn   bits=8 group=128\n"
     "*                             gptq  bits=4 group=128 zero=1\n"},
};

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// Glob over [p, pe) and [n, ne): '*' any run, '?' one character, '{a,b}' one of the words.
bool glob(const char* p, const char* pe, const char* n, const char* ne) {
    while (p < pe) {
        if (*p == '*') {
            for (const char* k = n;; ++k) {
                if (glob(p + 1, pe, k, ne)) return true;
                if (k == ne) return false;
            }
        }
        if (*p == '{') {
            const char* close = p;
            while (close < pe && *close != '}') ++close;
            if (close == pe) return n < ne && *n == '{' && glob(p + 1, pe, n + 1, ne);  // an unclosed brace is literal
            for (const char* a = p + 1; a <= close;) {
                const char* b = a;
                while (b < close && *b != ',') ++b;
                std::string alt(a, b);
                alt.append(close + 1, pe);
                if (glob(alt.data(), alt.data() + alt.size(), n, ne)) return true;
                a = b + 1;
            }
            return false;
        }
        if (n == ne || (*p != '?' && *p != *n)) return false;
        ++p;
        ++n;
    }
    return n == ne;
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& name) {
    return glob(pattern.data(), pattern.data() + pattern.size(), name.data(), name.data() + name.size());
}

const RecipeRule* match(const Recipe& r, const std::string& name) {
    for (auto& rule : r.rules)
        if (glob_match(rule.pattern, name)) return &rule;
    return nullptr;
}

Recipe parse_recipe(const std::string& text, const std::string& origin) {
    Recipe r;
    r.origin = origin;
    r.text = text;
    std::istringstream in(text);
    std::string raw;
    for (int line = 1; std::getline(in, raw); ++line) {
        const std::string body = trim(raw.substr(0, raw.find('#')));
        if (body.empty()) continue;
        std::istringstream words(body);
        RecipeRule rule;
        rule.line = line;
        rule.text = body;
        words >> rule.pattern >> rule.quantizer;
        const std::string where = origin + " line " + std::to_string(line) + " (" + body + ")";
        if (rule.quantizer.empty()) throw Error(where + ": a line is PATTERN QUANTISER [KEY=VALUE ...]; this one names no quantiser");
        if (rule.quantizer.find('=') != std::string::npos)
            throw Error(where + ": '" + rule.quantizer + "' is an option where the quantiser's name belongs");
        for (std::string w; words >> w;) {
            const size_t eq = w.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
                throw Error(where + ": '" + w + "' is not an option (options are KEY=VALUE, without spaces around '=')");
            rule.options.emplace_back(w.substr(0, eq), w.substr(eq + 1));
        }
        r.rules.push_back(std::move(rule));
    }
    if (r.rules.empty()) throw Error(origin + ": the recipe has no lines (PATTERN QUANTISER [KEY=VALUE ...])");
    return r;
}

std::vector<std::string> recipe_presets() {
    std::vector<std::string> out;
    for (auto& [name, text] : kPresets) out.emplace_back(name);
    return out;
}

Recipe load_recipe(const std::string& name_or_path) {
    for (auto& [name, text] : kPresets)
        if (name_or_path == name) {
            Recipe r = parse_recipe(text, "preset " + name_or_path);
            r.strict = false;
            return r;
        }
    std::ifstream in(name_or_path, std::ios::binary);
    if (!in) {
        std::string known;
        for (auto& p : recipe_presets()) known += (known.empty() ? "" : ", ") + p;
        throw Error("--recipe " + name_or_path + ": neither a preset (" + known + ") nor a readable file");
    }
    std::ostringstream os;
    os << in.rdbuf();
    return parse_recipe(os.str(), name_or_path);
}

}  // namespace radiance::convert
