#include "onestore/status.h"

namespace onestore {

const char* CodeString(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
#define ONESTORE_CASE_(name, str, doc) \
  case Code::name:                     \
    return str;
      ONESTORE_ERROR_CODES(ONESTORE_CASE_)
#undef ONESTORE_CASE_
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeString(code_)) + ": " + message_;
}

}  // namespace onestore
