// Writes grammar_fuzz's seed corpus into a folder: a GBNF grammar, regular expressions, JSON
// Schemas (objects, refs, arrays, formats, integer ranges) and a choice list, each behind the byte
// that picks its parser.
#include <fstream>
#include <string>

namespace {

void write(const std::string& dir, const std::string& name, char kind, const std::string& text) {
    std::ofstream(dir + "/" + name, std::ios::binary) << kind << text;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string d = argv[1];
    write(d, "json.gbnf", 0,
          "root ::= object\nvalue ::= object | array | string | [0-9]+ | \"true\"\nobject ::= \"{\" ( string \":\" value (\",\" string \":\" "
          "value)* )? \"}\"\narray ::= \"[\" (value (\",\" value)*)? \"]\"\nstring ::= \"\\\"\" [^\"\\\\]* \"\\\"\"\n");
    write(d, "arith.gbnf", 0, "root ::= (expr \"=\" term \"\\n\")+\nexpr ::= term ([-+*/] term)*\nterm ::= [0-9]+ | \"(\" expr \")\"\n");
    write(d, "phone.re", 1, "\\(?\\d{3}\\)? ?\\d{3}-\\d{4}");
    write(d, "named.re", 1, "(?P<y>[0-9]{4})-(?:0[1-9]|1[0-2])[a-f\\u00e9]*x+?");
    write(d, "object.schema", 2,
          R"({"type":"object","properties":{"a":{"type":"string","maxLength":5},"b":{"type":"integer","minimum":-3,"maximum":250},"c":{"enum":["x",1,null]}},"required":["a"]})");
    write(d, "refs.schema", 2,
          R"({"$defs":{"n":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}}}},"$ref":"#/$defs/n"})");
    write(d, "strings.schema", 2,
          R"({"anyOf":[{"type":"string","format":"date-time"},{"type":"string","pattern":"^[A-Z]{2}\\d+$"},{"type":["number","null"]}]})");
    write(d, "tuple.schema", 2, R"({"type":"array","prefixItems":[{"type":"boolean"},{"const":{"x":[1]}}],"items":false,"minItems":1})");
    write(d, "choice", 3, "red\ngreen\ngreenish\n\xE7\xBA\xA2");
    return 0;
}
