// recipe.h: what rad-convert does to each weight. A recipe is lines of
//
//     PATTERN  QUANTISER  [KEY=VALUE ...]      # comment
//
// PATTERN is a glob over the container's weight names (blk.3.ffn_down.weight, token_embd.weight,
// output.weight): `*` any run of characters, `?` one, `{a,b}` either word. The first line whose
// pattern matches a weight says which quantiser plugin encodes it, with which options. A named
// preset (int8, int4, int4-gptq, fp8) stands for a recipe written for every model of the llama family.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace radiance::convert {

struct RecipeRule {
    int line = 0;      // 1-based, in the recipe's text
    std::string text;  // the line as written, comment and outer blanks removed
    std::string pattern;
    std::string quantizer;
    std::vector<std::pair<std::string, std::string>> options;  // in the order written
};

struct Recipe {
    std::string origin;  // "preset int8" or the file's path, for messages
    std::string text;    // the recipe as read, recorded in the container
    std::vector<RecipeRule> rules;
    // A file's line that matches no weight is an error (a typo would otherwise quantise nothing);
    // a preset's lines are written for many models and may match none (an untied head).
    bool strict = true;
};

// Parses recipe text; throws radiance::Error naming `origin` and the line.
Recipe parse_recipe(const std::string& text, const std::string& origin);
// A preset's name (int8, int4, int4-gptq, fp8) or a recipe file's path; throws naming either.
Recipe load_recipe(const std::string& name_or_path);
// The presets' names, for messages and --help.
std::vector<std::string> recipe_presets();

// Whether `name` matches the glob `pattern` (the whole name).
bool glob_match(const std::string& pattern, const std::string& name);
// The first rule matching `name`, or nullptr.
const RecipeRule* match(const Recipe& r, const std::string& name);

}  // namespace radiance::convert
