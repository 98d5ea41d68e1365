// Sha256: a small, portable SHA-256 (FIPS 180-4) for content digests
// (fingerprint.h). Not constant-time; it hashes public content, never keys.
#ifndef ONESTORE_SYNC_SHA256_H_
#define ONESTORE_SYNC_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace onestore {

class Sha256 {
 public:
  Sha256();
  // Hashes more bytes. Any number of calls, any sizes.
  void Update(std::string_view bytes);
  // The digest of everything given so far. The object is spent afterwards.
  std::array<uint8_t, 32> Final();
  // Final() as 64 lowercase hex digits.
  std::string FinalHex();

 private:
  void Block(const uint8_t* p);

  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes hashed so far
};

// The hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

}  // namespace onestore

#endif  // ONESTORE_SYNC_SHA256_H_
