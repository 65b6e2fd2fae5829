/* The C ABI from C (include/symmcoll/symmcoll_c.h, libsymmcoll.so): a simulated node's all-reduce
 * on the caller's fp32 data, checked here against a double sum; bad input returns a result code and
 * a one-line message instead of crashing. Exit 0: passed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "symmcoll/symmcoll_c.h"

static int failures = 0;
#define EXPECT(cond, what)                                    \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "FAIL %s (line %d)\n", what, __LINE__); \
      ++failures;                                             \
    }                                                         \
  } while (0)

int main(void) {
  symmcollComm_t comms[8];
  int world = 0;
  symmcollSimOptions_t o;
  memset(&o, 0, sizeof o);
  o.machine = "h200x2";
  o.graph = 1;
  symmcollResult_t r = symmcollSimNodeCreate(&o, comms, 8, &world);
  EXPECT(r == symmcollSuccess, symmcollGetLastError());
  EXPECT(world == 2, "world 2");
  if (r != symmcollSuccess) return 1;

  enum { N = 4096 };
  static float in[2][N], out[2][N];
  unsigned s = 1;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < N; ++i) {
      s = s * 1103515245u + 12345u;
      in[k][i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
      out[k][i] = NAN;
    }
  symmcollCallInfo_t info;
  for (int k = 0; k < 2; ++k) {
    r = symmcollAllReduce(in[k], out[k], N, symmcollFloat32, symmcollSum, comms[k], NULL, "auto", &info);
    EXPECT(r == symmcollSuccess, symmcollGetLastError());
  }
  EXPECT(info.complete == 1, "the last rank's call completes the collective");
  EXPECT(info.predicted_us > 0, "a predicted time");
  EXPECT(info.algo && strncmp(info.algo, "all_reduce.", 11) == 0, "an all_reduce algorithm");
  double worst = 0;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < N; ++i) {
      const double want = (double)in[0][i] + (double)in[1][i];
      const double e = fabs(out[k][i] - want);
      if (!(e <= worst)) worst = e; /* NaN (an unwritten value) counts as worst */
    }
  EXPECT(worst < 1e-5, "the sum matches double precision");

  /* Bad input: a result code and one line, never a crash. */
  r = symmcollAllReduce(in[0], out[0], N, (symmcollDataType_t)7, symmcollSum, comms[0], NULL, NULL, NULL);
  EXPECT(r == symmcollInvalidArgument, "a bad data type is an invalid argument");
  EXPECT(strstr(symmcollGetLastError(), "data type") != NULL, symmcollGetLastError());
  EXPECT(strchr(symmcollGetLastError(), '\n') == NULL, "one line");
  r = symmcollAllReduce(in[0], out[0], N, symmcollFloat32, symmcollSum, NULL, NULL, NULL, NULL);
  EXPECT(r == symmcollInvalidArgument, "a null communicator is an invalid argument");
  r = symmcollAllGather(in[0], out[0], N, symmcollFloat32, comms[0], NULL, "no_such_algo", NULL);
  EXPECT(r == symmcollInvalidArgument, "an unknown algorithm is an invalid argument");
  EXPECT(strstr(symmcollGetLastError(), "no_such_algo") != NULL, symmcollGetLastError());
  r = symmcollSimNodeCreate(&o, comms, 1, &world);
  EXPECT(r == symmcollInvalidArgument, "too small a comms array");
  const char* algo = NULL;
  r = symmcollChooseAlgo("all_reduce", 4096, 2, symmcollBfloat16, "", 1, &algo);
  EXPECT(r == symmcollSuccess && algo && *algo, "choose_algo");
  if (!symmcollHasCuda()) {
    EXPECT(symmcollCudaCommFromNccl(NULL, NULL) == symmcollUnsupported, "no CUDA backend: unsupported");
  } else {
    EXPECT(symmcollCudaCommFromNccl(NULL, NULL) == symmcollInvalidArgument, "a null ncclComm_t");
  }
  for (int k = 0; k < 2; ++k) EXPECT(symmcollCommDestroy(comms[k]) == symmcollSuccess, "destroy");
  EXPECT(symmcollCommDestroy(NULL) == symmcollSuccess, "destroy NULL");
  if (failures) return 1;
  printf("C ABI: passed (%s)\n", symmcollGetVersion());
  return 0;
}
