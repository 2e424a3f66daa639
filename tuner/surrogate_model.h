// SurrogateModel: what the acquisition needs from a model: a posterior mean and variance at
// unit-cube points. GaussianProcess and CoKriging implement it.
#pragma once

#include <Eigen/Core>

namespace autotune::tuner {

// Posterior of the latent objective at one point, in the objective's own units.
struct Prediction {
  double mean = 0.0;
  double variance = 0.0;  // of the latent function; observation noise excluded; >= 0
};

class SurrogateModel {
 public:
  virtual ~SurrogateModel() = default;
  virtual int input_dims() const = 0;
  // REQUIRES: x.size() == input_dims().
  virtual Prediction Predict(const Eigen::VectorXd& x) const = 0;
  // Predictions at the columns of x (input_dims() x m). The default calls Predict per column.
  virtual void PredictBatch(const Eigen::MatrixXd& x, Eigen::VectorXd* mean,
                            Eigen::VectorXd* variance) const {
    mean->resize(x.cols());
    variance->resize(x.cols());
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      Prediction p = Predict(x.col(j));
      (*mean)[j] = p.mean;
      (*variance)[j] = p.variance;
    }
  }
};

}  // namespace autotune::tuner
