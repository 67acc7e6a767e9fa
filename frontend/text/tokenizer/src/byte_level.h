// byte_level.h: GPT-2's reversible byte <-> printable character mapping, used by the
// ByteLevel pre-tokenizer, normalizer and decoder.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace radiance::text::byte_level {

// UTF-8 of the character that stands for byte b (1 or 2 bytes long).
std::string_view char_for_byte(uint8_t b);

// Every byte of s replaced by its character.
std::string encode(std::string_view s);
void append_encoded(std::string& out, std::string_view s);

// The byte a character stands for, or -1 when c is not one of the 256 characters.
int byte_for_char(char32_t c);

}  // namespace radiance::text::byte_level
