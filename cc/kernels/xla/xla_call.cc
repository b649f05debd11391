// Built when TFSO_XLA is set (tools/tf_flags.py), as its users are.
#if TFSO_XLA
#include "xla/xla_call.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/types.h"
#include "xla/service/custom_call_status_internal.h"
#include "xla/service/custom_call_target_registry.h"
#include "xla/xla_targets.h"

namespace tf_scatter_ops {
namespace {

// The first word of every opaque string: its layout's version.
constexpr int64_t kLayout = 0x7f5c0002;

void PutShape(const ::tensorflow::TensorShape& s, std::vector<int64_t>* w) {
  w->push_back(s.dims());
  for (int d = 0; d < s.dims(); ++d) w->push_back(s.dim_size(d));
}

// Reads a shape PutShape wrote at p, and moves p past it.
bool GetShape(const int64_t*& p, const int64_t* end, ::tensorflow::TensorShape* s) {
  if (p == end || *p < 0 || *p > end - p - 1) return false;
  const int64_t rank = *p++;
  const std::vector<int64_t> dims(p, p + rank);
  p += rank;
  return ::tensorflow::TensorShape::BuildTensorShape(dims, s).ok();
}

}  // namespace

std::string EncodeXlaCall(const XlaCall& c) {
  std::vector<int64_t> w = {kLayout,       c.form.n,       c.form.depth,
                            c.form.nslots, c.form.slice,   c.index_dtype,
                            c.ignore,      c.gather};
  PutShape(c.indices, &w);
  PutShape(c.target, &w);
  return std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(int64_t));
}

bool DecodeXlaCall(const char* opaque, size_t size, XlaCall* c) {
  constexpr size_t kHead = 8;
  if (size % sizeof(int64_t) != 0 || size < kHead * sizeof(int64_t)) return false;
  std::vector<int64_t> w(size / sizeof(int64_t));
  std::memcpy(w.data(), opaque, size);
  if (w[0] != kLayout) return false;
  c->form.n = w[1];
  c->form.depth = static_cast<int>(w[2]);
  c->form.nslots = w[3];
  c->form.slice = w[4];
  c->index_dtype = static_cast<::tensorflow::DataType>(w[5]);
  c->ignore = w[6] != 0;
  c->gather = w[7] != 0;
  const int64_t* p = w.data() + kHead;
  const int64_t* end = w.data() + w.size();
  return GetShape(p, end, &c->indices) && GetShape(p, end, &c->target) && p == end;
}

std::string XlaTargetName(const char* op, ::tensorflow::DataType dtype) {
  return absl::StrCat("tf_scatter_ops.", op, ".", ::tensorflow::DataTypeString(dtype));
}

// TensorFlow's libraries do not export XlaCustomCallStatusSetFailure (the
// public API of custom_call_status.h): the status is the struct XLA's
// internal header defines, failed when it holds a message. This is the one
// place that writes it.
void SetXlaFailure(XlaCustomCallStatus* status, absl::string_view message) {
  status->message = std::string(message);
}

XlaTargetRegistrar::XlaTargetRegistrar(const char* op, ::tensorflow::DataType dtype,
                                       XlaTarget fn) {
  xla::CustomCallTargetRegistry::Global()->Register(
      XlaTargetName(op, dtype), reinterpret_cast<void*>(fn), "Host");
}

}  // namespace tf_scatter_ops
#endif  // TFSO_XLA
