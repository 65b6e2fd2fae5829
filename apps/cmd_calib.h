// symmcoll calibrate (microbenchmark rows: measured on GPUs or predicted by the simulator) and
// symmcoll fit (rows -> machine file), apps/cmd_calib.cpp. argv[0] is the command's name.
#pragma once

namespace symm::apps {

int cmd_calibrate(int argc, char** argv);
int cmd_fit(int argc, char** argv);

}  // namespace symm::apps
