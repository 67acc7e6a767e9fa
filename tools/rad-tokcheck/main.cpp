// rad-tokcheck: compares the tokenizer with golden files recorded with transformers.
//   rad-tokcheck TOKENIZER GOLDEN.json   token ids and decoded text of every case
//   rad-tokcheck --chat GOLDEN.json      chat template rendering (when built with it)
// Exit status: 0 all cases pass, 1 some fail, 2 usage or load error.
#include <iostream>
#include <string>

#include "tok_check.h"
#ifdef RAD_HAVE_CHAT_CHECK
#include "chat_check.h"
#endif

namespace {

int usage() {
    std::cerr << "usage: rad-tokcheck TOKENIZER GOLDEN.json\n"
                 "       rad-tokcheck --chat GOLDEN.json\n"
                 "TOKENIZER is a tokenizer.json (tokenizer_config.json beside it is read too)\n"
                 "or GPT-2's encoder.json (with vocab.bpe beside it).\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return usage();
    std::string first = argv[1];
    if (first == "--chat") {
#ifdef RAD_HAVE_CHAT_CHECK
        return radiance_chat_check(argv[2]);
#else
        std::cerr << "rad-tokcheck: chat template support is not built in\n";
        return 2;
#endif
    }
    if (!first.empty() && first[0] == '-') return usage();
    try {
        radiance::text::Tokenizer tokenizer = radiance::tools::load_tokenizer_any(first);
        radiance::tools::TokCheckResult r = radiance::tools::run_tok_check(tokenizer, argv[2], std::cout);
        std::cout << r.passed << " passed, " << r.failed << " failed\n";
        return r.failed == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "rad-tokcheck: " << e.what() << "\n";
        return 2;
    }
}
