// convert.cpp: checkpoint tensors -> declared weights through the plugin's name map, each stored
// as the checkpoint has it or, with a recipe, as a quantiser plugin encodes it.
//
// With a recipe the architecture is declared twice. The first declare (the family's unquantised
// plugin, weights as stored) names the weights and their shapes; the recipe's lines give each an
// encoding; the quant descriptor follows from those encodings (or --quant); the second declare is
// the plugin of the exact (id, descriptor) pair, against the encodings it will read. Every recipe
// error is found before a byte is written, and a file is only ever renamed into place whole.
#include "radiance/convert/convert.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "radiance/container/container.h"
#include "radiance/convert/bpe_files.h"
#include "radiance/convert/gguf_source.h"
#include "radiance/convert/hf_config.h"
#include "radiance/convert/quantize_weight.h"
#include "radiance/convert/quantised_sources.h"
#include "radiance/convert/st_pooling.h"
#include "radiance/convert/random_weights.h"
#include "radiance/convert/recipe.h"
#include "radiance/convert/safetensors.h"
#include "radiance/engine/builder.h"
#include "radiance/engine/model_meta.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

namespace fs = std::filesystem;

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

std::optional<std::string> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

bool is_float(int dt) { return dt == RAD_F32 || dt == RAD_BF16 || dt == RAD_F16; }

// The dtype a checkpoint of this config stores (torch_dtype, or dtype in newer configs): what
// random weights are drawn in. bf16 when the config names none.
int config_dtype(const nlohmann::json& cfg) {
    for (const char* key : {"torch_dtype", "dtype"})
        if (cfg.contains(key) && cfg[key].is_string()) {
            const std::string d = cfg[key].get<std::string>();
            if (d == "float32") return RAD_F32;
            if (d == "float16") return RAD_F16;
            if (d == "bfloat16") return RAD_BF16;
        }
    return RAD_BF16;
}

// One weight's bytes as the name map builds them from checkpoint tensors.
struct Built {
    std::vector<int64_t> shape;
    int dtype = 0;
    std::vector<uint8_t> owned;     // CONCAT / TRANSPOSE results
    const uint8_t* data = nullptr;  // or a view into the checkpoint
    uint64_t bytes = 0;
    std::vector<std::string> used;
    // Stored quantised (a GPTQ / AWQ / fp8 checkpoint's linear): no float values here; `used` names
    // its stored tensors and the import quantiser reads them itself.
    bool quantised = false;
};

// A weight built from sources the checkpoint stores quantised: its shape is the declaration's
// (the import quantiser checks it against the stored tensors), its values none.
void built_quantised(const Checkpoint& ck, const std::vector<std::string>& sources, const std::string& target, Built* out) {
    out->quantised = true;
    for (auto& s : sources) {
        if (!stored_quantised(ck, s) && !ck.find(s))
            throw Error("tensor '" + s + "' is missing from " + ck.files() + " ('" + target + "')");
        out->used.push_back(s);
    }
}

// A target's map entries in declaration order: a plugin may give alternatives (a checkpoint that
// fuses what another stores per part), the first that builds wins.
std::vector<const engine::NameMapEntry*> entries_for(const std::vector<engine::NameMapEntry>& map, const std::string& target) {
    std::vector<const engine::NameMapEntry*> out;
    for (auto& e : map)
        if (e.target == target) out.push_back(&e);
    return out;
}

// A tensor of more dimensions than declared whose leading ones flatten into the declared first
// (transformers 5's fused experts, [E, 2F, d] for a declared [E * 2F, d]): row-major, so the
// bytes are already the declared layout.
void flatten_leading(std::vector<int64_t>& shape, const std::vector<int64_t>& want) {
    if (want.empty() || shape.size() <= want.size()) return;
    const size_t extra = shape.size() - want.size();
    int64_t lead = 1;
    for (size_t i = 0; i <= extra; ++i) lead *= shape[i];
    std::vector<int64_t> flat{lead};
    flat.insert(flat.end(), shape.begin() + static_cast<std::ptrdiff_t>(extra) + 1, shape.end());
    if (flat == want) shape = flat;
}

// Builds a weight from its map entry; returns false (with `why`) when its sources are absent.
bool build(const Checkpoint& ck, const engine::NameMapEntry& e, Built* out, std::string* why) {
    switch (e.kind) {
    case RAD_MAP_COPY: {
        for (auto& s : e.sources)
            if (stored_quantised(ck, s)) {
                built_quantised(ck, {s}, e.target, out);
                return true;
            } else if (const StTensor* t = ck.find(s)) {
                out->shape = t->shape;
                out->dtype = t->dtype;
                out->data = ck.data(*t);
                out->bytes = t->bytes;
                out->used = {s};
                return true;
            }
        *why = "none of the tensors {" + join(e.sources, ", ") + "} is in " + ck.files();
        return false;
    }
    case RAD_MAP_CONCAT: {
        for (auto& s : e.sources)
            if (stored_quantised(ck, s)) {  // a fused weight of quantised parts: the import stacks them
                built_quantised(ck, e.sources, e.target, out);
                return true;
            }
        std::vector<const StTensor*> parts;
        for (auto& s : e.sources) {
            const StTensor* t = ck.find(s);
            if (!t) {
                *why = "tensor '" + s + "' is missing from " + ck.files();
                return false;
            }
            if (!parts.empty()) {
                if (t->dtype != parts[0]->dtype)
                    throw Error("tensor '" + s + "' in " + t->file + " is " + rad_dtype_name(t->dtype) + " but '" + parts[0]->name +
                                "' is " + rad_dtype_name(parts[0]->dtype) + "; they stack into '" + e.target + "'");
                std::vector<int64_t> a(t->shape.begin() + 1, t->shape.end()), b(parts[0]->shape.begin() + 1, parts[0]->shape.end());
                if (a != b || t->shape.empty())
                    throw Error("tensor '" + s + "' in " + t->file + " has shape " + shape_str(t->shape) + ", which does not stack with '" +
                                parts[0]->name + "' " + shape_str(parts[0]->shape) + " into '" + e.target + "'");
            }
            parts.push_back(t);
        }
        out->shape = parts[0]->shape;
        out->shape[0] = 0;
        out->dtype = parts[0]->dtype;
        for (auto* t : parts) {
            out->shape[0] += t->shape[0];
            const uint8_t* d = ck.data(*t);
            out->owned.insert(out->owned.end(), d, d + t->bytes);
            out->used.push_back(t->name);
        }
        out->data = out->owned.data();
        out->bytes = out->owned.size();
        return true;
    }
    case RAD_MAP_TRANSPOSE: {
        const StTensor* t = e.sources.empty() ? nullptr : ck.find(e.sources[0]);
        if (!t) {
            *why = "tensor '" + (e.sources.empty() ? std::string("?") : e.sources[0]) + "' is missing from " + ck.files();
            return false;
        }
        if (t->shape.size() != 2) throw Error("tensor '" + t->name + "' in " + t->file + " is not 2-D and cannot be transposed");
        if (stored_quantised(ck, t->name))
            throw Error("tensor '" + t->name + "' in " + t->file + " is stored quantised and cannot be transposed");
        const int64_t r = t->shape[0], c = t->shape[1];
        const size_t es = static_cast<size_t>(rad_dtype_bits(t->dtype) / 8);
        out->owned.resize(t->bytes);
        const uint8_t* d = ck.data(*t);
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j) std::memcpy(&out->owned[(j * r + i) * es], d + (i * c + j) * es, es);
        out->shape = {c, r};
        out->dtype = t->dtype;
        out->data = out->owned.data();
        out->bytes = out->owned.size();
        out->used = {t->name};
        return true;
    }
    }
    throw Error("name map entry '" + e.target + "' has an unknown kind " + std::to_string(e.kind));
}

// Whether a weight's sources are all in the checkpoint (without building it).
bool present(const Checkpoint& ck, const engine::NameMapEntry& e) {
    if (e.kind == RAD_MAP_COPY) {
        for (auto& s : e.sources)
            if (ck.find(s) || stored_quantised(ck, s)) return true;
        return false;
    }
    for (auto& s : e.sources)
        if (!ck.find(s) && !stored_quantised(ck, s)) return false;
    return !e.sources.empty();
}

// The checkpoint tensors a weight is made of (the first of its map entries that is present: a
// COPY's first source found, every source of the others), and whether any is stored quantised.
struct WeightSources {
    std::vector<std::string> names;
    std::string quantised;  // "TENSOR in FILE" of a source stored quantised; empty for float sources
};

WeightSources sources_of(const Checkpoint& ck, const std::vector<const engine::NameMapEntry*>& entries) {
    WeightSources out;
    for (const engine::NameMapEntry* e : entries) {
        if (!present(ck, *e)) continue;
        for (auto& s : e->sources) {
            const StTensor* q = stored_quantised(ck, s);
            if (e->kind == RAD_MAP_COPY && !q && !ck.find(s)) continue;
            out.names.push_back(s);
            if (q && out.quantised.empty()) out.quantised = q->name + " (" + rad_dtype_name(q->dtype) + ") in " + q->file;
            if (e->kind == RAD_MAP_COPY) break;
        }
        break;
    }
    return out;
}

int64_t rows_of(const std::vector<int64_t>& shape) {
    int64_t r = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) r *= shape[i];
    return r;
}

std::string encoding_str(const RadEncoding& e) {
    std::string out = e.scheme;
    if (e.transform[0]) out += std::string(" transform ") + e.transform;
    for (int k = 0; k < e.n_planes; ++k) {
        const RadPlaneDesc& p = e.planes[k];
        out += std::string(k ? ", " : " ") + p.role + " " + rad_dtype_name(p.dtype);
        if (p.kind == RAD_PLANE_TABLE)
            out += " table [" + std::to_string(p.rows) + "x" + std::to_string(p.cols) + "]";
        else if (p.block_r != 1 || p.block_c != 1)
            out += " [" + (p.block_r ? std::to_string(p.block_r) : std::string("all")) + "x" +
                   (p.block_c ? std::to_string(p.block_c) : std::string("all")) + "]";
    }
    return out;
}

std::string options_str(const RecipeRule& r) {
    std::vector<std::string> o;
    for (auto& [k, v] : r.options) o.push_back(k + "=" + v);
    return o.empty() ? std::string("(defaults)") : join(o, " ");
}

// The descriptor of the plugin that serves what a recipe wrote: from the codes of every weight a
// quantiser encoded affinely (cast-only recipes: "", the unquantised plugin).
std::string derive_quant(const std::map<std::string, WeightPlan>& plans) {
    bool fp8 = false, int8 = false, int4 = false;
    std::string other;
    for (auto& [name, p] : plans) {
        if (std::strcmp(p.enc.scheme, "plain") == 0) continue;
        const int dt = p.enc.planes[0].dtype;
        if (std::strcmp(p.enc.scheme, "affine") != 0)
            other = name + " (" + p.enc.scheme + ")";
        else if (dt == RAD_FP8_E4M3)
            fp8 = true;
        else if (dt == RAD_I8 || dt == RAD_U8)
            int8 = true;
        else if (dt == RAD_I4 || dt == RAD_U4)
            int4 = true;
        else
            other = name + " (affine " + rad_dtype_name(dt) + " codes)";
    }
    if (!other.empty() || (fp8 && (int8 || int4)))
        throw Error("no descriptor follows from the recipe's encodings" +
                    (other.empty() ? std::string(" (fp8 and integer codes mixed)") : ": " + other) +
                    "; name the one to serve with --quant DESCRIPTOR");
    if (fp8) return "fp8_e4m3";
    if (int4) return "w4a16";  // a w4a16 plugin also reads 8-bit codes (an int8 head)
    if (int8) return "w8a16";
    return "";
}

// Each line's quantiser and options, checked once whatever it matches: the plugin's quantiser, or
// a message naming the line (an unknown quantiser, an option it does not have, a value of the
// wrong type).
std::map<int, const RadQuantizerInfo*> check_lines(const core::Registry& reg, const Recipe& rc, std::vector<std::string>* errors) {
    std::map<int, const RadQuantizerInfo*> out;
    for (const RecipeRule& r : rc.rules) {
        const std::string where = rc.origin + " line " + std::to_string(r.line) + " (" + r.text + ")";
        const RadQuantizerInfo* q = reg.quantizer(r.quantizer);
        if (!q) {
            std::vector<std::string> known;
            for (auto& qp : reg.quantizer_plugins())
                for (auto* qi : qp.quantizers) known.push_back(qi->name);
            errors->push_back(where + ": no quantiser '" + r.quantizer + "' is loaded (" +
                              (known.empty() ? std::string("none: is libquant in a quantizers/ folder of RADIANCE_HOME?")
                                             : "loaded: " + join(known, ", ")) +
                              ")");
            continue;
        }
        bool ok = true;
        for (auto& [k, v] : r.options) {
            const RadQuantOption* o = nullptr;
            for (int i = 0; i < q->n_options; ++i)
                if (k == q->options[i].key) o = &q->options[i];
            if (!o) {
                std::vector<std::string> names;
                for (int i = 0; i < q->n_options; ++i) names.push_back(q->options[i].key);
                errors->push_back(where + ": quantiser '" + q->name + "' has no option '" + k +
                                  "' (its options: " + (names.empty() ? std::string("none") : join(names, ", ")) + ")");
                ok = false;
                continue;
            }
            char* end = nullptr;
            if (o->type == RAD_P_INT) std::strtoll(v.c_str(), &end, 10);
            if (o->type == RAD_P_F64) std::strtod(v.c_str(), &end);
            if (end && *end) {
                errors->push_back(where + ": option " + k + "=" + v + " is not " + (o->type == RAD_P_INT ? "an integer" : "a number") +
                                  " (" + k + ": " + o->doc + ")");
                ok = false;
            }
        }
        if (ok) out[r.line] = q;
    }
    return out;
}

// Why a quantiser refused a weight's shape, as precisely as the converter can say without knowing
// the quantiser: an integer option that does not divide the row is named.
std::string shape_refusal(const RecipeRule& r, int64_t cols) {
    for (auto& [k, v] : r.options) {
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (end && !*end && n > 0 && cols % n != 0)
            return k + "=" + v + " does not divide its rows of " + std::to_string(cols) + " columns";
    }
    return "its shape does not fit the options (" + options_str(r) +
           "), or what it reads does not (the quantiser's message above says why)";
}

// The recipe applied to the weights the first declaration named: an encoding for each, or every
// refusal at once (a line's unknown quantiser or option, an option value a quantiser refuses, a
// shape it cannot encode, a weight no line matches, a file's line that matches nothing).
//
// A quantiser whose options include `checkpoint` and `tensors` reads the checkpoint's stored
// tensors itself (libquant's import): those two are given here (the source folder, the weight's
// tensors from the name map) unless the line sets them. A weight the checkpoint stores quantised
// can only go to such a quantiser.
std::map<std::string, WeightPlan> plan_recipe(const core::Registry& reg, const Recipe& rc,
                                              const std::vector<std::pair<std::string, std::vector<int64_t>>>& weights,
                                              const std::map<std::string, WeightSources>& sources, const std::string& checkpoint,
                                              const std::string& calib_dir) {
    std::vector<std::string> errors;
    const std::map<int, const RadQuantizerInfo*> lines = check_lines(reg, rc, &errors);
    std::map<std::string, WeightPlan> plans;
    std::set<int> used_lines;
    std::map<int, std::vector<std::string>> refused;  // line -> the weights whose shape it cannot encode
    std::map<int, std::string> refused_why, bad_values;
    std::set<int> uncalibrated;  // lines whose quantiser needs calib=DIR and got none
    for (auto& [name, shape] : weights) {
        const RecipeRule* r = match(rc, name);
        if (!r) {
            errors.push_back("weight '" + name + "' " + shape_str(shape) + " matches no line of " + rc.origin +
                             " (end it with a line such as `* cast dtype=bf16` for the rest)");
            continue;
        }
        used_lines.insert(r->line);
        auto q = lines.find(r->line);
        if (q == lines.end()) continue;  // the line itself is wrong, and named already
        WeightPlan p;
        p.q = q->second;
        std::vector<const char*> ks, vs;
        for (auto& [k, v] : r->options) {
            p.keys.push_back(k);
            p.vals.push_back(v);
        }
        auto has_option = [&](const std::string& key) {
            for (int i = 0; i < p.q->n_options; ++i)
                if (key == p.q->options[i].key) return true;
            return false;
        };
        auto given = [&](const std::string& key) { return std::find(p.keys.begin(), p.keys.end(), key) != p.keys.end(); };
        const auto src = sources.find(name);
        const bool reads_checkpoint = has_option("checkpoint") && has_option("tensors");
        if (reads_checkpoint && !given("checkpoint")) p.keys.push_back("checkpoint"), p.vals.push_back(checkpoint);
        if (reads_checkpoint && !given("tensors") && src != sources.end())
            p.keys.push_back("tensors"), p.vals.push_back(join(src->second.names, ","));
        // A calibrated quantiser (an option `calib`, libquant's gptq) gets the folder rad-convert's
        // calibration run wrote (--calib TEXT), unless the line names one.
        if (has_option("calib") && !given("calib")) {
            if (calib_dir.empty()) {  // said once a line, naming its first weight
                if (uncalibrated.insert(r->line).second)
                    errors.push_back(rc.origin + " line " + std::to_string(r->line) + " (" + r->text + "): quantiser '" + p.q->name +
                                     "' needs calibration data (for weight '" + name +
                                     "' and any other it matches): give rad-convert --calib TEXT (a text file the model is run "
                                     "over) or calib=DIR on the line");
                continue;
            }
            p.keys.push_back("calib"), p.vals.push_back(calib_dir);
        }
        if (!reads_checkpoint && src != sources.end() && !src->second.quantised.empty()) {
            errors.push_back(rc.origin + " line " + std::to_string(r->line) + " (" + r->text + "): weight '" + name +
                             "' is stored quantised in the checkpoint (" + src->second.quantised + "), which quantiser '" + p.q->name +
                             "' cannot read: give it `import`, which takes the stored numbers");
            continue;
        }
        for (size_t i = 0; i < p.keys.size(); ++i) {
            ks.push_back(p.keys[i].c_str());
            vs.push_back(p.vals[i].c_str());
        }
        const int64_t cols = shape.empty() ? 1 : shape.back(), rows = rows_of(shape);
        const int rc_enc = p.q->encoding(name.c_str(), rows, cols, ks.data(), vs.data(), static_cast<int>(ks.size()), &p.enc);
        if (rc_enc == RAD_E_SHAPE) {
            refused[r->line].push_back("'" + name + "' " + shape_str(shape));
            refused_why.try_emplace(r->line, shape_refusal(*r, cols));
        } else if (rc_enc != RAD_OK) {
            std::vector<std::string> docs;
            for (int i = 0; i < p.q->n_options; ++i)
                docs.push_back(std::string(p.q->options[i].key) + " (default " + p.q->options[i].deflt + "): " + p.q->options[i].doc);
            bad_values.try_emplace(r->line, "quantiser '" + std::string(p.q->name) + "' refuses the values " + options_str(*r) + " (" +
                                                join(docs, "; ") + "; its own message above, if any, says why)");
        } else {
            plans[name] = std::move(p);
        }
    }
    for (const RecipeRule& r : rc.rules) {
        const std::string where = rc.origin + " line " + std::to_string(r.line) + " (" + r.text + ")";
        if (auto it = bad_values.find(r.line); it != bad_values.end()) errors.push_back(where + ": " + it->second);
        if (auto it = refused.find(r.line); it != refused.end()) {
            const auto& ws = it->second;
            std::string names = ws[0];
            for (size_t i = 1; i < ws.size() && i < 3; ++i) names += ", " + ws[i];
            if (ws.size() > 3) names += " and " + std::to_string(ws.size() - 3) + " more";
            errors.push_back(where + ": quantiser '" + r.quantizer + "' cannot encode weight" + (ws.size() > 1 ? "s " : " ") + names +
                             ": " + refused_why[r.line]);
        }
        if (rc.strict && !used_lines.count(r.line))
            errors.push_back(where +
                             " matches no weight of this model (the first matching line wins; names look like "
                             "blk.0.attn_qkv.weight: rad-convert --plan-only -v lists them)");
    }
    if (!errors.empty()) throw Error("the recipe " + rc.origin + " does not fit this model:\n  " + join(errors, "\n  "));
    return plans;
}

// Removes OUT.partial unless released: nothing half-written is left behind by any failure.
struct PartialFile {
    std::string path;
    bool keep = false;
    ~PartialFile() {
        if (!path.empty() && !keep) {
            std::error_code ec;
            fs::remove(path, ec);
        }
    }
};

}  // namespace

bool needs_calibration(const core::Registry& reg, const std::string& recipe) {
    if (recipe.empty()) return false;
    const Recipe rc = load_recipe(recipe);
    for (const RecipeRule& r : rc.rules) {
        const RadQuantizerInfo* q = reg.quantizer(r.quantizer);
        bool has = false, given = false;
        for (int i = 0; q && i < q->n_options; ++i) has = has || std::string(q->options[i].key) == "calib";
        for (auto& [k, v] : r.options) given = given || k == "calib";
        if (has && !given) return true;
    }
    return false;
}

void convert(const core::Registry& reg, const ConvertOptions& opts, std::ostream& log) {
    const fs::path src(opts.src);
    // A GGUF file alone: its metadata as the config, its vocabulary as the tokenizer, its tensors
    // (decoded by the ggml import) as the checkpoint, and `* ggml file=SRC` as the default recipe.
    const std::optional<GgufSource> gguf =
        !opts.random_weights && is_gguf_file(opts.src) ? std::optional<GgufSource>(read_gguf_source(opts.src)) : std::nullopt;
    nlohmann::json cfg;
    if (gguf) {
        cfg = gguf->config;
    } else {
        auto cfg_text = read_file(src / "config.json");
        if (!cfg_text) throw Error(opts.src + ": no config.json (expected a Hugging Face model folder or a GGUF file)");
        cfg = nlohmann::json::parse(*cfg_text, nullptr, false);
        if (cfg.is_discarded() || !cfg.is_object()) throw Error((src / "config.json").string() + ": not valid JSON");
    }
    std::string name = gguf ? src.stem().string() : fs::absolute(src).lexically_normal().filename().string();
    if (name.empty()) name = fs::absolute(src).lexically_normal().parent_path().filename().string();
    auto meta = metadata_from_config(cfg, name);
    if (auto gen_text = gguf ? std::nullopt : read_file(src / "generation_config.json")) {
        auto gen = nlohmann::json::parse(*gen_text, nullptr, false);
        if (gen.is_discarded()) throw Error((src / "generation_config.json").string() + ": not valid JSON");
        add_generation_config(gen, meta);
    }
    if (!opts.arch.empty()) meta[engine::meta_key::arch] = container::MetaValue::of_str(opts.arch);
    if (!gguf) read_st_pooling(src, meta);  // a sentence-transformers folder's pooling and normalisation
    const std::string arch_id = meta[engine::meta_key::arch].s;
    // Without a recipe: a GGUF file takes `* ggml file=SRC`, and a folder whose config.json has a
    // quantization_config is imported as stored.
    std::optional<Recipe> recipe;
    if (!opts.recipe.empty())
        recipe = load_recipe(opts.recipe);
    else if (gguf)
        recipe = parse_recipe(gguf_recipe(opts.src, cfg), "the GGUF source's default recipe");
    else if (!opts.random_weights)
        recipe = import_recipe(cfg, (src / "config.json").string());
    // The weights' first declaration: the family's unquantised plugin (the one an unquantised
    // checkpoint is served by), which also says what a recipe applies to.
    const core::ArchPlugin& arch0 = reg.arch(arch_id, "");

    // Tokenizer ids travel as metadata too, for the front end.
    auto tok_cfg_text = gguf ? std::optional<std::string>(gguf->tokenizer_config) : read_file(src / "tokenizer_config.json");
    std::map<std::string, std::string> text_meta;
    for (auto& [k, v] : meta) text_meta[k] = v.to_string();
    engine::ModelMeta model_meta(text_meta);

    const Checkpoint ck = opts.random_weights ? Checkpoint{} : gguf ? gguf_checkpoint(reg, opts.src) : Checkpoint::open_folder(opts.src);
    const int random_dtype = config_dtype(cfg);
    const double init_std = cfg.contains("initializer_range") && cfg["initializer_range"].is_number()
                                ? cfg["initializer_range"].get<double>()
                                : 0.02;  // transformers' default
    engine::DeclareOptions d;
    d.ctx.max_tok = 256;
    d.ctx.max_seqs = 16;
    d.ctx.max_ctx = static_cast<int32_t>(std::max<int64_t>(model_meta.get()->n_ctx_train, 256));
    d.ctx.kv_dtype = RAD_F32;
    d.ctx.act_dtype = RAD_F32;
    d.ctx.world_size = 1;
    d.select = opts.select;
    d.encoding = [&](const std::string& stored, const std::vector<engine::NameMapEntry>& map) -> std::optional<RadEncoding> {
        if (opts.random_weights) return rad_encoding_plain(random_dtype);
        std::vector<std::string> names;
        for (const engine::NameMapEntry* e : entries_for(map, stored)) names.insert(names.end(), e->sources.begin(), e->sources.end());
        if (names.empty()) names.push_back(stored);
        for (auto& s : names)
            if (const StTensor* t = ck.find(s); t && is_float(t->dtype)) return rad_encoding_plain(t->dtype);
        return std::nullopt;
    };
    engine::Declaration decl = engine::declare(arch0, reg, model_meta, d);
    const core::ArchPlugin* arch = &arch0;
    std::string quant;
    std::map<std::string, WeightPlan> plans;
    if (recipe) {
        std::vector<std::pair<std::string, std::vector<int64_t>>> stored;
        std::map<std::string, WeightSources> sources;
        for (const engine::WeightDecl& wd : decl.weights) {
            if (!wd.source.empty()) continue;
            // an optional weight the checkpoint lacks under every alternative is not stored
            bool any = false;
            for (const engine::NameMapEntry* e : entries_for(decl.name_map, wd.name)) any = any || present(ck, *e);
            if (entries_for(decl.name_map, wd.name).empty()) any = present(ck, engine::NameMapEntry{wd.name, RAD_MAP_COPY, {wd.name}});
            if (wd.d.optional && (opts.random_weights || !any)) continue;
            stored.emplace_back(wd.name, std::vector<int64_t>(wd.d.shape, wd.d.shape + wd.d.rank));
            engine::NameMapEntry self{wd.name, RAD_MAP_COPY, {wd.name}};
            std::vector<const engine::NameMapEntry*> entries = entries_for(decl.name_map, wd.name);
            if (entries.empty()) entries.push_back(&self);
            if (!opts.random_weights) sources[wd.name] = sources_of(ck, entries);
        }
        if (opts.recipe.empty() && !gguf)
            log << "note: " << recipe->origin << " names quant_method " << cfg["quantization_config"].value("quant_method", std::string())
                << ": the weights are imported as stored (recipe `* import`)\n";
        plans = plan_recipe(reg, *recipe, stored, sources, opts.src, opts.calib_dir);
        quant = opts.quant ? *opts.quant : derive_quant(plans);
        arch = &reg.arch(arch_id, quant);  // the exact pair, or a refusal naming it and the known ones
        d.encoding = [&](const std::string& s, const std::vector<engine::NameMapEntry>&) -> std::optional<RadEncoding> {
            auto it = plans.find(s);
            if (it == plans.end()) return std::nullopt;
            return it->second.enc;
        };
        decl = engine::declare(*arch, reg, model_meta, d);
        meta[engine::meta_key::quant] = container::MetaValue::of_str(quant);
    }
    log << "architecture " << arch->plugin->name << " (" << arch_id << ", \"" << quant << "\"): " << decl.weights.size() << " weights, "
        << decl.ops.size() << " ops\n";

    if (opts.plan_only) {
        std::vector<std::string> errors;
        for (size_t i = 0; i < decl.ops.size(); ++i)
            if (!decl.ops[i].res.ok() && !decl.ops[i].queried)
                errors.push_back("op " + std::to_string(i) + " '" + decl.ops[i].geom.op + "': " + decl.ops[i].res.error);
        if (!errors.empty()) throw Error("the plan does not boot:\n  " + join(errors, "\n  "));
    }

    std::unique_ptr<container::Writer> w;
    PartialFile partial;
    if (opts.out_fd >= 0 && !opts.plan_only) {
        w = std::make_unique<container::Writer>(opts.out_fd, opts.out.empty() ? std::string("the container in memory") : opts.out);
        for (auto& [k, v] : meta) w->set_meta(k, v);
    } else if (!opts.plan_only) {
        if (opts.out.empty()) throw Error("no output file (-o OUT.rad)");
        partial.path = opts.out + ".partial";
        w = std::make_unique<container::Writer>(partial.path);
        for (auto& [k, v] : meta) w->set_meta(k, v);
    }
    std::set<std::string> used;
    std::vector<std::string> errors;
    std::ostringstream report;  // a line a weight: how it was stored, and its error
    size_t n_stored = 0, done = 0;
    for (const engine::WeightDecl& wd : decl.weights) n_stored += wd.source.empty();
    for (const engine::WeightDecl& wd : decl.weights) {
        ck.drop_made();            // a lazily made source's bytes (a GGUF's, decoded) live for one weight
        if (!wd.source.empty()) {  // a view of another stored weight (a tied head, a quantised weight's scales)
            const engine::WeightDecl* src_w = decl.weight(wd.source);
            if (!src_w) {
                errors.push_back("weight '" + wd.name + "' views '" + wd.source + "', which is not declared");
            } else if (!wd.planes.empty() && recipe) {
                auto it = plans.find(wd.source);
                if (it != plans.end() && rad_encoding_plane(&it->second.enc, wd.planes.c_str()) < 0)
                    errors.push_back("weight '" + wd.name + "' views plane '" + wd.planes + "' of '" + wd.source + "', whose encoding (" +
                                     encoding_str(it->second.enc) + ") has none");
            }
            continue;
        }
        ++done;
        engine::NameMapEntry self{wd.name, RAD_MAP_COPY, {wd.name}};
        std::vector<const engine::NameMapEntry*> entries = entries_for(decl.name_map, wd.name);
        if (entries.empty()) entries.push_back(&self);
        Built b;
        std::string why;
        std::vector<int64_t> want(wd.d.shape, wd.d.shape + wd.d.rank);
        if (opts.random_weights) {
            if (wd.d.optional) continue;
            b.shape = want;
            b.dtype = wd.d.dtype == RAD_DT_NONE || wd.d.dtype == RAD_F32 ? random_dtype : wd.d.dtype;
            b.owned = random_weight(wd.name, want, b.dtype, init_std, opts.random_seed);
            b.data = b.owned.data();
            b.bytes = b.owned.size();
            b.used = {"(random)"};
        } else {
            bool built = false;
            for (const engine::NameMapEntry* e : entries) {
                std::string why_e;
                if ((built = build(ck, *e, &b, &why_e))) break;
                why = why_e;  // the last alternative's reason: plugins list the usual layout last
            }
            if (!built) {
                if (!wd.d.optional) errors.push_back("weight '" + wd.name + "': " + why);
                continue;
            }
        }
        if (b.quantised) {  // the import quantiser checks the stored tensors' shapes
            b.shape = want;
            b.dtype = random_dtype;  // the logical dtype recorded: the config's, what the floats were
        }
        flatten_leading(b.shape, want);
        if (b.shape != want) {
            std::vector<std::string> from;
            for (auto& s : b.used) from.push_back(s + " in " + ck.find(s)->file);
            errors.push_back("weight '" + wd.name + "' from {" + join(from, ", ") + "} has shape " + shape_str(b.shape) +
                             ", the architecture declares " + shape_str(want));
            continue;
        }
        if (b.quantised && !recipe) {
            errors.push_back("weight '" + wd.name + "' is stored quantised (" + join(b.used, ", ") + " in " + ck.files() + ") but " +
                             opts.src + "/config.json has no quantization_config: give a recipe with `import` for it");
            continue;
        }
        const std::string file = opts.random_weights ? std::string("(random)") : ck.find(b.used[0]) ? ck.find(b.used[0])->file : ck.files();
        if (b.quantised) {
            for (auto& u : b.used)
                for (auto& c : quantised_companions(ck, u)) used.insert(c);
        } else if (!is_float(b.dtype) || (!recipe && wd.d.dtype != RAD_DT_NONE && wd.d.dtype != b.dtype && wd.d.dtype != RAD_F32)) {
            errors.push_back("weight '" + wd.name + "' is stored as " + rad_dtype_name(b.dtype) + " in " + file +
                             (wd.d.dtype != RAD_DT_NONE ? std::string(", declared ") + rad_dtype_name(wd.d.dtype) : std::string()));
            continue;
        }
        for (auto& u : b.used) used.insert(u);
        if (opts.verbose && !recipe)
            log << "  " << wd.name << " " << rad_dtype_name(b.dtype) << " " << shape_str(b.shape) << " <- " << join(b.used, " + ") << "\n";
        if (!w || !errors.empty()) continue;  // (after an error only the checks go on)
        if (!recipe) {
            uint32_t enc = w->add_encoding(rad_encoding_plain(b.dtype));
            w->add_tensor(wd.name, enc, b.shape, b.dtype, {std::span<const uint8_t>(b.data, b.bytes)});
            continue;
        }
        auto it = plans.find(wd.name);
        if (it == plans.end()) {
            errors.push_back("weight '" + wd.name + "' is declared by " + arch->plugin->name + " but not by " + arch0.plugin->name +
                             ", which the recipe was applied to");
            continue;
        }
        const RecipeRule* rule = match(*recipe, wd.name);
        // a weight stored quantised has no float values: the import reads its stored tensors
        WeightValues v{b.quantised ? nullptr : b.data, b.dtype, rows_of(b.shape), b.shape.back()};
        const WeightError err = quantize_weight(wd.name, b.shape, b.dtype, v, it->second, *w);
        std::ostringstream line;
        line << std::left << std::setw(28) << wd.name << " " << std::setw(14) << shape_str(b.shape) << " line " << rule->line << ": "
             << rule->quantizer << " " << options_str(*rule) << " -> " << encoding_str(it->second.enc);
        if (b.quantised)
            line << "; imported as stored (no float values to measure it against)";
        else
            line << "; rel error " << std::setprecision(4) << err.rel_frobenius << ", max abs " << err.max_abs;
        report << "  " << line.str() << "\n";
        log << "[" << done << "/" << n_stored << "] " << line.str() << "\n";
    }
    if (!errors.empty()) throw Error("cannot convert " + opts.src + ":\n  " + join(errors, "\n  "));
    std::vector<std::string> unused;
    for (auto& [n, t] : ck.tensors())
        if (!used.count(n)) unused.push_back(n);
    if (!unused.empty()) {
        log << "warning: " << unused.size() << " checkpoint tensors are not used by the architecture:";
        for (size_t i = 0; i < unused.size() && i < 8; ++i) log << " " << unused[i];
        log << (unused.size() > 8 ? " ..." : "") << "\n";
    }
    if (!w) {
        log << "plan-only: every op resolves and every weight is present with its declared shape"
            << (recipe ? " and its recipe's encoding" : "") << "\n";
        return;
    }
    if (gguf) {
        if (!gguf->tokenizer_json.empty()) w->set_blob(container::Section::Tokenizer, gguf->tokenizer_json);
        if (!gguf->note.empty()) log << "note: " << opts.src << ": " << gguf->note << "\n";
    } else if (auto t = read_file(src / "tokenizer.json")) {
        w->set_blob(container::Section::Tokenizer, *t);
    } else if (auto v = read_file(src / "vocab.json"), m = read_file(src / "merges.txt"); v && m) {
        w->set_blob(container::Section::Tokenizer, tokenizer_json_from_bpe_files(*v, *m, opts.src));
        log << "note: the tokenizer from " << opts.src << "'s vocab.json and merges.txt (byte-level BPE, as GPT-2's)\n";
    } else {
        log << "note: no tokenizer.json (nor vocab.json + merges.txt) in " << opts.src << "; the container carries no tokenizer\n";
    }
    if (tok_cfg_text) {
        w->set_blob(container::Section::TokenizerConfig, *tok_cfg_text);
        auto tc = nlohmann::json::parse(*tok_cfg_text, nullptr, false);
        if (!tc.is_discarded() && tc.contains("chat_template") && tc["chat_template"].is_string())
            w->set_blob(container::Section::ChatTemplate, tc["chat_template"].get<std::string>());
    }
    if (auto t = gguf ? std::nullopt : read_file(src / "chat_template.jinja")) w->set_blob(container::Section::ChatTemplate, *t);
    std::string weights_line = opts.random_weights ? "weights: random (seed " + std::to_string(opts.random_seed) + ", std " +
                                                         std::to_string(init_std) + "), plain " + rad_dtype_name(random_dtype) + "\n"
                                                   : std::string("weights: plain, as stored in the checkpoint\n");
    if (recipe) {
        weights_line = (opts.random_weights ? "weights: random (seed " + std::to_string(opts.random_seed) + ")" : std::string("weights")) +
                       ", by the recipe " + recipe->origin + ":\n";
        std::istringstream lines(recipe->text);
        int n = 0;
        for (std::string l; std::getline(lines, l);) weights_line += "  " + std::to_string(++n) + "| " + l + "\n";
        weights_line +=
            "each weight: shape, recipe line, encoding, and ||w - decoded|| / ||w|| (Frobenius) of what is stored:\n" + report.str();
    }
    w->set_blob(container::Section::Recipe,
                "rad-convert " + opts.src + "\narchitecture " + arch_id + " quant \"" + quant + "\"\n" + weights_line);
    w->finish();
    if (opts.out_fd >= 0) return;
    fs::rename(partial.path, opts.out);
    partial.keep = true;
    log << "wrote " << opts.out << "\n";
}

}  // namespace radiance::convert
