#ifndef SPARKTORCH_CORE_PS_HOGWILD_WORKER_H_
#define SPARKTORCH_CORE_PS_HOGWILD_WORKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/ps/ps_client.h"
#include "core/train/trainer.h"

namespace sparktorch {

// The trainer's side of hogwild: pulls the server's weights into the parameters every
// `pull_every` steps (under the server's lock with --lock), pushes every step's gradient, and
// reports each epoch. Between pulls the trainer applies its own optimizer to its copy, so that
// later gradients of a stretch come from improved weights. Not thread-safe.
class HogwildWorker : public TrainHooks {
 public:
  // `params` are the module's parameters (float32, on any device); `client` must outlive this.
  // `epochs`: how many this worker trains in all, which its epoch reports tell the server (for
  // the time left in its progress lines).
  HogwildWorker(PsClient& client, std::vector<at::Tensor> params, int epochs);

  void BeforeStep() override;
  bool AfterBackward(int64_t rows, double loss, bool last_in_epoch) override;
  bool AfterEpoch(const EpochStats& stats) override;
  bool stop_requested() const override { return stop_; }

  // Tells the server this worker is done and loads the weights it answers with.
  void Finish(const std::string& summary);

  uint64_t version() const { return version_; }  // of the weights last pulled

 private:
  void Load(const std::string& data);

  PsClient& client_;
  std::vector<at::Tensor> params_;
  std::vector<float> gradients_;
  bool lock_;
  int pull_every_;
  int epochs_;
  int since_pull_ = 0;  // steps since the last pull; 0: pull before the next
  uint64_t version_ = 0;
  bool fresh_ = false;  // the parameters hold weights that came with the last push
  bool stop_ = false;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_PS_HOGWILD_WORKER_H_
