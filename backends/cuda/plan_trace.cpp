// The measured timeline of one host-plan call (plan_trace.h).
#include "backends/cuda/plan_trace.h"

#include "backends/cuda/check.h"
#include "backends/cuda/graph_capture.h"

namespace symm::cuda {

PlanTracer::~PlanTracer() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t PlanTracer::make_event() {
  cudaEvent_t e;
  SYMM_CUDA_CHECK(cudaEventCreate(&e));  // timed: no cudaEventDisableTiming
  events_.push_back(e);
  return e;
}

void PlanTracer::begin_call(cudaStream_t main) {
  Call c;
  c.host_begin = std::chrono::steady_clock::now();
  c.begin = make_event();
  record_event(c.begin, main);
  calls_.push_back(c);
}

void PlanTracer::end_call(cudaStream_t main) {
  if (calls_.empty() || calls_.back().end) fail(ErrorCode::kInternal, "plan trace: a call ended that did not begin");
  Call& c = calls_.back();
  c.end = make_event();
  record_event(c.end, main);
  c.host_end = std::chrono::steady_clock::now();
}

std::size_t PlanTracer::open(cudaStream_t stream, int s, const char* name, std::string args) {
  const std::string call = "\"call\":" + std::to_string(calls_.empty() ? 0 : calls_.size() - 1);
  Open o{s, name, args.empty() ? call : call + "," + args, make_event(), nullptr};
  record_event(o.begin, stream);
  open_.push_back(std::move(o));
  return open_.size() - 1;
}

void PlanTracer::close(std::size_t span, cudaStream_t stream) {
  Open& o = open_.at(span);
  o.end = make_event();
  record_event(o.end, stream);
}

std::vector<PlanSpan> PlanTracer::spans() const {
  if (calls_.empty()) fail(ErrorCode::kInternal, "plan trace: no call began");
  const cudaEvent_t zero = calls_.front().begin;
  auto us = [&](cudaEvent_t e) {
    float ms = 0;
    SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms, zero, e));
    return 1e3 * double(ms);
  };
  std::vector<PlanSpan> out;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    if (!calls_[i].end) fail(ErrorCode::kInternal, "plan trace: call " + std::to_string(i) + " did not end");
    out.push_back(PlanSpan{0, "call", "\"call\":" + std::to_string(i), us(calls_[i].begin), us(calls_[i].end)});
  }
  for (const Open& o : open_) {
    if (!o.end) fail(ErrorCode::kInternal, std::string("plan trace: span '") + o.name + "' was not closed");
    out.push_back(PlanSpan{o.stream, o.name, o.args, us(o.begin), us(o.end)});
  }
  return out;
}

std::vector<HostSpan> PlanTracer::host_spans() const {
  std::vector<HostSpan> out;
  if (calls_.empty()) return out;
  const auto zero = calls_.front().host_begin;
  auto us = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - zero).count();
  };
  for (const Call& c : calls_) out.push_back(HostSpan{us(c.host_begin), us(c.host_end)});
  return out;
}

}  // namespace symm::cuda
