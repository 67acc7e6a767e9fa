// Writes tokenizer_fuzz's seed corpus into a folder: small tokenizer.json documents the loader
// accepts, built of the components the Hugging Face families use (byte-level BPE with a Split
// regex and a template post-processor; SentencePiece-style Metaspace with byte fallback and a
// decoder sequence; normalizers), one followed by a NUL and a tokenizer_config.json.
#include <fstream>
#include <string>

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string d = argv[1];
    const std::string byte_level =
        R"({"version":"1.0","added_tokens":[{"id":6,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],)"
        R"("normalizer":{"type":"NFC"},)"
        R"("pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?i:'s|'t)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},)"
        R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]},)"
        R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],)"
        R"("pair":[{"Sequence":{"id":"A","type_id":0}},{"Sequence":{"id":"B","type_id":1}}],"special_tokens":{"<s>":{"id":"<s>","ids":[6],"tokens":["<s>"]}}},)"
        R"("decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},)"
        R"("model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":"","end_of_word_suffix":"","fuse_unk":false,"byte_fallback":false,"ignore_merges":false,)"
        R"("vocab":{"H":0,"e":1,"l":2,"o":3,"He":4,"ll":5,"\u0120":7,"\u0120w":8},"merges":["H e","l l","\u0120 w"]}})";
    write(d + "/byte_level.json", byte_level);
    write(d + "/byte_level_config.json",
          byte_level + std::string(1, '\0') +
              R"({"bos_token":"<s>","eos_token":{"content":"</s>","special":true},"add_bos_token":true,"add_eos_token":false,"model_max_length":2048})");
    write(d + "/metaspace.json",
          R"({"version":"1.0","added_tokens":[{"id":0,"content":"<unk>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],)"
          R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"\u2581"},{"type":"Replace","pattern":{"String":" "},"content":"\u2581"}]},)"
          R"("pre_tokenizer":null,"post_processor":null,)"
          R"("decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"\u2581"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},)"
          R"("model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":true,)"
          R"("vocab":{"<unk>":0,"<0x48>":1,"<0x0A>":2,"\u2581":3,"H":4,"e":5,"He":6,"\u2581He":7,"l":8,"ll":9},"merges":["H e","\u2581 He","l l"]}})");
    write(d + "/metaspace_pre.json",
          R"({"version":"1.0","added_tokens":[],"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]},)"
          R"("pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"first","split":true},)"
          R"("post_processor":null,"decoder":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"first","split":true},)"
          R"("model":{"type":"BPE","vocab":{"\u2581":0,"h":1,"e":2,"he":3,"\u2581he":4},"merges":[["h","e"],["\u2581","he"]]}})");
    return 0;
}
