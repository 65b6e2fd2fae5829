// The measured timeline of one host-plan call (plan_trace.h).
#include "backends/cuda/plan_trace.h"

#include "backends/cuda/check.h"

namespace symm::cuda {

PlanTracer::~PlanTracer() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

namespace {

// In a stream capture (a traced graph call), an external record: an event-record node that a
// replay records, where a plain record would only order the capture.
void record_on(cudaEvent_t e, cudaStream_t s) {
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  SYMM_CUDA_CHECK(cudaStreamIsCapturing(s, &cap));
  if (cap == cudaStreamCaptureStatusActive)
    SYMM_CUDA_CHECK(cudaEventRecordWithFlags(e, s, cudaEventRecordExternal));
  else
    SYMM_CUDA_CHECK(cudaEventRecord(e, s));
}

}  // namespace

cudaEvent_t PlanTracer::make_event() {
  cudaEvent_t e;
  SYMM_CUDA_CHECK(cudaEventCreate(&e));  // timed: no cudaEventDisableTiming
  events_.push_back(e);
  return e;
}

void PlanTracer::begin_call(cudaStream_t main) {
  host_begin_ = std::chrono::steady_clock::now();
  start_ = make_event();
  record_on(start_, main);
}

void PlanTracer::end_call() { host_end_ = std::chrono::steady_clock::now(); }

std::size_t PlanTracer::open(cudaStream_t stream, int s, const char* name, std::string args) {
  Open o{s, name, std::move(args), make_event(), nullptr};
  record_on(o.begin, stream);
  open_.push_back(std::move(o));
  return open_.size() - 1;
}

void PlanTracer::close(std::size_t span, cudaStream_t stream) {
  Open& o = open_.at(span);
  o.end = make_event();
  record_on(o.end, stream);
}

std::vector<PlanSpan> PlanTracer::spans() const {
  if (!start_) fail(ErrorCode::kInternal, "plan trace: no call began");
  std::vector<PlanSpan> out;
  for (const Open& o : open_) {
    if (!o.end) fail(ErrorCode::kInternal, std::string("plan trace: span '") + o.name + "' was not closed");
    float b = 0, e = 0;
    SYMM_CUDA_CHECK(cudaEventElapsedTime(&b, start_, o.begin));
    SYMM_CUDA_CHECK(cudaEventElapsedTime(&e, start_, o.end));
    out.push_back(PlanSpan{o.stream, o.name, o.args, 1e3 * double(b), 1e3 * double(e)});
  }
  return out;
}

double PlanTracer::host_enqueue_us() const {
  return std::chrono::duration<double, std::micro>(host_end_ - host_begin_).count();
}

}  // namespace symm::cuda
