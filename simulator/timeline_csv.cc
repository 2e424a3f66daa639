#include "simulator/timeline_csv.h"

#include <cstdio>
#include <fstream>

namespace autotune::sim {

std::string TimelineCsvHeader() {
  return "setting,step,seq,cycle,op,algorithm,bytes,tensors,start_us,copy_in_end_us,"
         "comm_end_us,end_us,first_tensor,last_tensor\n";
}

std::string TimelineCsvRows(int setting, const std::vector<StepTrace>& steps) {
  std::string out;
  char line[320];
  for (const StepTrace& st : steps) {
    for (const CollectiveRecord& c : st.collectives) {
      std::snprintf(line, sizeof(line), "%d,%d,%d,%d,%s,%s,%lld,%zu,%.3f,%.3f,%.3f,%.3f,%d,%d\n",
                    setting, st.step, c.seq, c.cycle, OpName(c.op), AlgorithmName(c.algorithm),
                    static_cast<long long>(c.bytes), c.tensors.size(), c.start_us, c.copy_in_end_us,
                    c.comm_end_us, c.end_us, c.tensors.empty() ? -1 : c.tensors.front(),
                    c.tensors.empty() ? -1 : c.tensors.back());
      out += line;
    }
  }
  return out;
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status::IoError("cannot write " + path);
  f << text;
  f.close();
  if (!f) return Status::IoError("cannot write " + path + " (disk full?)");
  return Status::Ok();
}

}  // namespace autotune::sim
