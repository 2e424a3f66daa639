// Built-in workloads: the exact parameter lists of four real models, generated layer by layer
// with the shapes and parameter names of torchvision (resnet50, vgg16) and Hugging Face
// transformers (bert-large: BertModel with pooler; gpt2: GPT2Model).
//
// Order: the order gradients become ready in a backward pass, i.e. the reverse of the
// forward (named_parameters) order, output layer first; this is also the order PyTorch DDP
// and Horovod see them in.
// ready_ms: the backward pass is spread over the layers in proportion to each layer's work
// (multiply-accumulates per sample: conv k*k*cin*cout*Hout*Wout, linear in*out*tokens,
// attention 2*seq*seq*hidden, normalization and embedding lookups a few ops per element);
// a layer's gradients are ready when the backward pass has done the work of every layer
// after it and its own, so the last tensor is ready at backward_ms.
#include <string>
#include <utility>
#include <vector>

#include "traces/workload.h"

namespace autotune {
namespace {

struct Param {
  std::string name;
  std::vector<int64_t> shape;
};

// One module of the forward pass: its work and the parameters it owns (maybe none).
struct Layer {
  double macs = 0.0;  // multiply-accumulates per sample, forward; backward is proportional
  std::vector<Param> params;
};

class ModelBuilder {
 public:
  // Appends a layer in forward order.
  void Add(double macs, std::vector<Param> params) {
    layers_.push_back(Layer{macs, std::move(params)});
  }

  Workload Build(std::string name, double forward_ms, double backward_ms,
                 double optimizer_ms) const {
    Workload w;
    w.name = std::move(name);
    w.dtype = DType::kFloat32;
    w.forward_ms = forward_ms;
    w.backward_ms = backward_ms;
    w.optimizer_ms = optimizer_ms;
    // Cumulative backward work when each tensor's gradient is ready.
    std::vector<double> done_macs;
    double cumulative = 0.0;
    for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
      cumulative += layer->macs;
      for (auto p = layer->params.rbegin(); p != layer->params.rend(); ++p) {
        TensorSpec t;
        t.name = p->name;
        t.shape = p->shape;
        t.dtype = w.dtype;
        w.tensors.push_back(std::move(t));
        done_macs.push_back(cumulative);
      }
    }
    // Work after the last gradient (layers without parameters before the first that has
    // some) is not part of the gradient timeline. Dividing then multiplying by the same
    // positive numbers keeps the times non-decreasing and makes the last exactly backward_ms.
    const double last = done_macs.back();
    for (size_t i = 0; i < w.tensors.size(); ++i) {
      w.tensors[i].ready_ms = backward_ms * (done_macs[i] / last);
    }
    return w;
  }

 private:
  std::vector<Layer> layers_;
};

double Conv(int64_t k, int64_t cin, int64_t cout, int64_t out_res) {
  return static_cast<double>(k * k * cin * cout * out_res * out_res);
}
// Normalization: a few operations per activation element (mean, variance, scale, shift).
double Norm(int64_t elements) { return 4.0 * static_cast<double>(elements); }

std::vector<Param> NormParams(const std::string& prefix, int64_t channels) {
  return {{prefix + ".weight", {channels}}, {prefix + ".bias", {channels}}};
}

// torchvision.models.resnet50: Bottleneck blocks [3, 4, 6, 3], stride on the 3x3 conv
// (ResNet v1.5), 224x224 input. Figures: V100 FP32, batch 32. Published training
// throughput is about 360-400 images/s (NVIDIA DeepLearningExamples, tf_cnn_benchmarks),
// i.e. 80-90 ms per step, split about 1:2 between forward and backward. Optimizer: SGD
// with momentum moves ~20 bytes per parameter (0.5 GB at ~800 GB/s) plus 161 kernel launches.
Workload ResNet50() {
  ModelBuilder b;
  b.Add(Conv(7, 3, 64, 112), {{"conv1.weight", {64, 3, 7, 7}}});
  b.Add(Norm(int64_t{64} * 112 * 112), NormParams("bn1", 64));
  const int blocks[4] = {3, 4, 6, 3};
  int64_t res = 56;  // after the stride-2 max pool
  int64_t inplanes = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    const int64_t outplanes = planes * 4;
    for (int block = 0; block < blocks[stage]; ++block) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(block) + ".";
      const int64_t stride = (block == 0 && stage > 0) ? 2 : 1;
      const int64_t out_res = res / stride;
      b.Add(Conv(1, inplanes, planes, res), {{p + "conv1.weight", {planes, inplanes, 1, 1}}});
      b.Add(Norm(planes * res * res), NormParams(p + "bn1", planes));
      b.Add(Conv(3, planes, planes, out_res), {{p + "conv2.weight", {planes, planes, 3, 3}}});
      b.Add(Norm(planes * out_res * out_res), NormParams(p + "bn2", planes));
      b.Add(Conv(1, planes, outplanes, out_res), {{p + "conv3.weight", {outplanes, planes, 1, 1}}});
      b.Add(Norm(outplanes * out_res * out_res), NormParams(p + "bn3", outplanes));
      if (block == 0) {
        b.Add(Conv(1, inplanes, outplanes, out_res),
              {{p + "downsample.0.weight", {outplanes, inplanes, 1, 1}}});
        b.Add(Norm(outplanes * out_res * out_res), NormParams(p + "downsample.1", outplanes));
      }
      inplanes = outplanes;
      res = out_res;
    }
  }
  b.Add(2048.0 * 1000.0, {{"fc.weight", {1000, 2048}}, {"fc.bias", {1000}}});
  return b.Build("resnet50", 30.0, 60.0, 2.0);
}

// torchvision.models.vgg16 (configuration D, no batch norm), 224x224 input. Module indices
// in `features` count the ReLU and MaxPool modules too. Figures: V100 FP32, batch 32;
// published training throughput about 230 images/s (tf_cnn_benchmarks), ~140 ms per step,
// split 1:2. Optimizer: SGD with momentum over 138M parameters (2.8 GB at ~800 GB/s).
Workload Vgg16() {
  ModelBuilder b;
  const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  int64_t cin = 3;
  int64_t res = 224;
  int index = 0;  // module index inside `features`
  for (int c : cfg) {
    if (c == 0) {  // MaxPool2d(2, 2)
      res /= 2;
      index += 1;
      continue;
    }
    const std::string p = "features." + std::to_string(index);
    b.Add(Conv(3, cin, c, res), {{p + ".weight", {c, cin, 3, 3}}, {p + ".bias", {c}}});
    cin = c;
    index += 2;  // Conv2d, ReLU
  }
  // classifier: Linear(25088, 4096), ReLU, Dropout, Linear(4096, 4096), ReLU, Dropout,
  // Linear(4096, 1000).
  const int64_t dims[][3] = {{0, int64_t{512} * 7 * 7, 4096}, {3, 4096, 4096}, {6, 4096, 1000}};
  for (const auto& d : dims) {
    const std::string p = "classifier." + std::to_string(d[0]);
    b.Add(static_cast<double>(d[1] * d[2]), {{p + ".weight", {d[2], d[1]}}, {p + ".bias", {d[2]}}});
  }
  return b.Build("vgg16", 45.0, 90.0, 4.0);
}

std::vector<Param> Linear(const std::string& prefix, int64_t in, int64_t out) {
  return {{prefix + ".weight", {out, in}}, {prefix + ".bias", {out}}};
}

// Hugging Face BertModel for bert-large-uncased, pooler included: vocab 30522, hidden 1024,
// 24 layers, 16 heads, intermediate 4096, 512 positions, 2 token types. Parameters:
// embeddings 30522*1024 + 512*1024 + 2*1024 + LayerNorm 2*1024 = 31,782,912;
// per layer 4*(1024*1024+1024) attention + 2*2*1024 LayerNorms + (1024*4096+4096)
// + (4096*1024+1024) = 12,596,224, times 24 = 302,309,376; pooler 1024*1024+1024 = 1,049,600;
// total 335,141,888 in 391 tensors.
// Figures: V100 FP32, batch 8 x sequence 128 (1024 tokens). Forward work is ~2 FLOPs per
// parameter per token plus attention, ~0.63 TFLOP per step; at ~10 TFLOP/s achieved that is
// ~65 ms, backward twice that. Optimizer: Adam moves ~28 bytes per parameter (9.4 GB).
Workload BertLarge() {
  const int64_t vocab = 30522;
  const int64_t hidden = 1024;
  const int64_t layers = 24;
  const int64_t intermediate = 4096;
  const int64_t positions = 512;
  const int64_t types = 2;
  const int64_t seq = 128;
  const double tokens = static_cast<double>(seq);
  const double h = static_cast<double>(hidden);
  ModelBuilder b;
  b.Add(tokens * h, {{"embeddings.word_embeddings.weight", {vocab, hidden}}});
  b.Add(tokens * h, {{"embeddings.position_embeddings.weight", {positions, hidden}}});
  b.Add(tokens * h, {{"embeddings.token_type_embeddings.weight", {types, hidden}}});
  b.Add(Norm(seq * hidden), NormParams("embeddings.LayerNorm", hidden));
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    b.Add(tokens * h * h, Linear(p + "attention.self.query", hidden, hidden));
    b.Add(tokens * h * h, Linear(p + "attention.self.key", hidden, hidden));
    b.Add(tokens * h * h, Linear(p + "attention.self.value", hidden, hidden));
    b.Add(2.0 * tokens * tokens * h, {});  // scores Q*K^T and probabilities * V
    b.Add(tokens * h * h, Linear(p + "attention.output.dense", hidden, hidden));
    b.Add(Norm(seq * hidden), NormParams(p + "attention.output.LayerNorm", hidden));
    b.Add(tokens * h * intermediate, Linear(p + "intermediate.dense", hidden, intermediate));
    b.Add(tokens * h * intermediate, Linear(p + "output.dense", intermediate, hidden));
    b.Add(Norm(seq * hidden), NormParams(p + "output.LayerNorm", hidden));
  }
  b.Add(h * h, Linear("pooler.dense", hidden, hidden));  // first token only
  return b.Build("bert-large", 65.0, 130.0, 12.0);
}

// Hugging Face GPT2Model, GPT-2 small: vocab 50257, 1024 positions, hidden 768, 12 layers,
// intermediate 3072. Conv1D weights are stored [in, out]. The language-model head is tied to
// wte, so it adds work at the start of the backward pass but no tensor; wte's gradient is
// complete only after the embedding lookup's backward, at the very end. Parameters:
// 50257*768 + 1024*768 + 12 * 7,087,872 + 2*768 = 124,439,808 in 148 tensors.
// Figures: V100 FP32, batch 4 x sequence 1024 (4096 tokens), ~1.2 TFLOP forward per step
// with the head and attention; at ~10 TFLOP/s ~120 ms, backward twice that. Optimizer: Adam,
// ~28 bytes per parameter (3.5 GB).
Workload Gpt2() {
  const int64_t vocab = 50257;
  const int64_t positions = 1024;
  const int64_t hidden = 768;
  const int64_t layers = 12;
  const int64_t intermediate = 3072;
  const int64_t seq = 1024;
  const double tokens = static_cast<double>(seq);
  const double h = static_cast<double>(hidden);
  ModelBuilder b;
  b.Add(tokens * h, {{"wte.weight", {vocab, hidden}}});
  b.Add(tokens * h, {{"wpe.weight", {positions, hidden}}});
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    b.Add(Norm(seq * hidden), NormParams(p + "ln_1", hidden));
    b.Add(tokens * h * 3 * h, {{p + "attn.c_attn.weight", {hidden, 3 * hidden}},
                               {p + "attn.c_attn.bias", {3 * hidden}}});
    b.Add(2.0 * tokens * tokens * h, {});  // scores and probabilities * V (full causal matrix)
    b.Add(tokens * h * h,
          {{p + "attn.c_proj.weight", {hidden, hidden}}, {p + "attn.c_proj.bias", {hidden}}});
    b.Add(Norm(seq * hidden), NormParams(p + "ln_2", hidden));
    b.Add(tokens * h * intermediate,
          {{p + "mlp.c_fc.weight", {hidden, intermediate}}, {p + "mlp.c_fc.bias", {intermediate}}});
    b.Add(tokens * h * intermediate,
          {{p + "mlp.c_proj.weight", {intermediate, hidden}}, {p + "mlp.c_proj.bias", {hidden}}});
  }
  b.Add(Norm(seq * hidden), NormParams("ln_f", hidden));
  b.Add(tokens * h * static_cast<double>(vocab), {});  // tied LM head: logits = h * wte^T
  return b.Build("gpt2", 120.0, 240.0, 5.0);
}

}  // namespace

const std::vector<std::string>& BuiltinWorkloadNames() {
  static const std::vector<std::string> kNames = {"resnet50", "vgg16", "bert-large", "gpt2"};
  return kNames;
}

Status BuiltinWorkload(const std::string& name, Workload* out) {
  if (name == "resnet50") {
    *out = ResNet50();
  } else if (name == "vgg16") {
    *out = Vgg16();
  } else if (name == "bert-large") {
    *out = BertLarge();
  } else if (name == "gpt2") {
    *out = Gpt2();
  } else {
    std::string names;
    for (const std::string& n : BuiltinWorkloadNames()) names += (names.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown built-in workload \"" + name + "\" (known: " + names + ")");
  }
  return Status::Ok();
}

}  // namespace autotune
