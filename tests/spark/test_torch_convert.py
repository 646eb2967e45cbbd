"""sparktorch_spark.torch_convert: a SparkTorch user's nn.Module, criterion and optimizer as the
binary's TorchScript file and train config, and the property that matters most: the real binary
trains what it makes with the loss and optimizer the user gave. Runs with install_python.sh's
base venv (PyTorch 2.x, numpy). Environment: SPARKTORCH, REPO, DATA (see stage.py); the rows
are synthetic, DATA is not read."""
import io
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np
import torch
from torch import nn

from stage import manifest  # and sys.path: sparktorch_spark

from sparktorch_spark.options import OptionError  # noqa: E402
from sparktorch_spark.torch_convert import (loss_spec, optimizer_spec, script_module,  # noqa: E402
                                            train_config)

SPARKTORCH = os.environ["SPARKTORCH"]
RUNS_LOSSES = ("it runs CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, BCELoss, "
               "BCEWithLogitsLoss")
RUNS_OPTIMIZERS = "it runs SGD, Adam, AdamW, RMSprop, Adagrad"


def setUpModule():  # pylint: disable=invalid-name
    # PyTorch 2.x warns on every torch.jit call the test makes itself; unittest resets filters.
    warnings.filterwarnings("ignore", message=r"`torch\.jit", category=FutureWarning)


class Classifier(nn.Module):
    def __init__(self, features=4, classes=3):
        super().__init__()
        self.hidden = nn.Linear(features, 16)
        self.out = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(x)))


class KwargsNet(nn.Module):
    """A forward TorchScript refuses (**kwargs) that calls numpy, with dropout."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x, **kwargs):
        return self.drop(self.fc(x)) * float(np.sqrt(4.0))


def script_error(module):
    """The first line of torch.jit.script's error on `module`."""
    try:
        torch.jit.script(module)
    except Exception as e:  # pylint: disable=broad-except
        return str(e).strip().splitlines()[0]
    raise AssertionError("torch.jit.script took %s" % type(module).__name__)


class LossSpecTest(unittest.TestCase):
    def test_every_loss_the_binary_runs_maps_to_its_spec(self):
        cases = [
            (nn.CrossEntropyLoss(), {"type": "cross_entropy", "label_smoothing": 0.0}),
            (nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1),
             {"type": "cross_entropy", "label_smoothing": 0.1, "weight": [1.0, 2.0, 0.5]}),
            (nn.NLLLoss(), {"type": "nll"}),
            (nn.NLLLoss(weight=torch.tensor([0.25, 4.0])), {"type": "nll", "weight": [0.25, 4.0]}),
            (nn.MSELoss(), {"type": "mse"}),
            (nn.L1Loss(), {"type": "l1"}),
            (nn.SmoothL1Loss(), {"type": "smooth_l1", "beta": 1.0}),
            (nn.SmoothL1Loss(beta=0.5), {"type": "smooth_l1", "beta": 0.5}),
            (nn.BCELoss(), {"type": "bce"}),
            (nn.BCEWithLogitsLoss(), {"type": "bce_with_logits"}),
            (nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0, 0.5])),
             {"type": "bce_with_logits", "pos_weight": [3.0, 0.5]}),
            # SparkTorch's lazy form: the class, made with no arguments.
            (nn.CrossEntropyLoss, {"type": "cross_entropy", "label_smoothing": 0.0}),
            (nn.MSELoss, {"type": "mse"}),
            (nn.SmoothL1Loss, {"type": "smooth_l1", "beta": 1.0}),
        ]
        for criterion, expected in cases:
            with self.subTest(criterion=criterion):
                self.assertEqual(loss_spec(criterion), expected)

    def refusal(self, criterion):
        with self.assertRaises(OptionError) as caught:
            loss_spec(criterion)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        return message

    def test_a_loss_the_binary_does_not_run_is_refused_naming_those_it_runs(self):
        class FocalLoss(nn.Module):
            def forward(self, output, target):
                return output.sum()

        class MyMSE(nn.MSELoss):  # its own forward: not what the binary computes
            pass

        for criterion, name in [(nn.HuberLoss(), "HuberLoss"), (nn.KLDivLoss, "KLDivLoss"),
                                (FocalLoss(), "FocalLoss"), (MyMSE(), "MyMSE"),
                                (nn.functional.mse_loss, "mse_loss")]:
            with self.subTest(name=name):
                self.assertEqual(self.refusal(criterion),
                                 "criterion %s is not one the sparktorch binary runs; %s"
                                 % (name, RUNS_LOSSES))

    def test_an_argument_the_binary_does_not_run_is_refused_naming_it(self):
        cases = [
            (nn.MSELoss(reduction="sum"), "criterion MSELoss: reduction='sum' is not one the "
             "sparktorch binary runs; it runs reduction='mean'"),
            (nn.CrossEntropyLoss(reduction="none"), "criterion CrossEntropyLoss: "
             "reduction='none' is not one the sparktorch binary runs; it runs reduction='mean'"),
            (nn.CrossEntropyLoss(ignore_index=0), "criterion CrossEntropyLoss: ignore_index=0 "
             "is not one the sparktorch binary runs; it runs ignore_index=-100 (the default)"),
            (nn.NLLLoss(ignore_index=3), "criterion NLLLoss: ignore_index=3 is not one the "
             "sparktorch binary runs; it runs ignore_index=-100 (the default)"),
            (nn.BCELoss(weight=torch.ones(2)), "criterion BCELoss: weight is not one the "
             "sparktorch binary runs; it runs weight=None"),
            (nn.BCEWithLogitsLoss(weight=torch.ones(2)), "criterion BCEWithLogitsLoss: weight "
             "is not one the sparktorch binary runs; it runs weight=None"),
        ]
        for criterion, expected in cases:
            with self.subTest(expected=expected):
                self.assertEqual(self.refusal(criterion), expected)


class OptimizerSpecTest(unittest.TestCase):
    def test_every_optimizer_the_binary_runs_gets_torchs_defaults_and_an_explicit_lr(self):
        cases = [
            # PyTorch 2.x's SGD lr default is 0.001; the binary's own would be 0.01.
            (torch.optim.SGD, None, {"type": "sgd", "lr": 0.001, "momentum": 0.0,
                                     "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}),
            (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4},
             {"type": "sgd", "lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 1e-4,
              "nesterov": True}),
            (torch.optim.Adam, None, {"type": "adam", "lr": 0.001, "betas": [0.9, 0.999],
                                      "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}),
            (torch.optim.Adam, {"lr": 3e-4, "betas": (0.8, 0.99), "amsgrad": True},
             {"type": "adam", "lr": 3e-4, "betas": [0.8, 0.99], "eps": 1e-8,
              "weight_decay": 0.0, "amsgrad": True}),
            (torch.optim.AdamW, None, {"type": "adamw", "lr": 0.001, "betas": [0.9, 0.999],
                                       "eps": 1e-8, "weight_decay": 0.01, "amsgrad": False}),
            (torch.optim.RMSprop, {"centered": True},
             {"type": "rmsprop", "lr": 0.01, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0,
              "momentum": 0.0, "centered": True}),
            (torch.optim.Adagrad, {"lr_decay": 0.1},
             {"type": "adagrad", "lr": 0.01, "lr_decay": 0.1, "weight_decay": 0.0,
              "initial_accumulator_value": 0.0, "eps": 1e-10}),
            # Keywords that only choose torch's implementation are left out.
            (torch.optim.Adam, {"foreach": False, "fused": True, "capturable": False,
                                "differentiable": False, "maximize": False},
             {"type": "adam", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8,
              "weight_decay": 0.0, "amsgrad": False}),
        ]
        for optimizer, params, expected in cases:
            with self.subTest(optimizer=optimizer.__name__, params=params):
                self.assertEqual(optimizer_spec(optimizer, params), expected)

    def test_an_instance_gives_its_class_and_first_param_group(self):
        weights = [torch.zeros(3, requires_grad=True)]
        self.assertEqual(optimizer_spec(torch.optim.AdamW(weights, lr=0.5, weight_decay=0.2)),
                         {"type": "adamw", "lr": 0.5, "betas": [0.9, 0.999], "eps": 1e-8,
                          "weight_decay": 0.2, "amsgrad": False})
        self.assertEqual(optimizer_spec(torch.optim.SGD(weights, lr=0.05, momentum=0.5)),
                         {"type": "sgd", "lr": 0.05, "momentum": 0.5, "dampening": 0.0,
                          "weight_decay": 0.0, "nesterov": False})

    def test_adam_with_decoupled_weight_decay_is_adamw(self):
        if "decoupled_weight_decay" not in torch.optim.Adam([torch.zeros(1)]).defaults:
            self.skipTest("this torch's Adam has no decoupled_weight_decay")
        self.assertEqual(optimizer_spec(torch.optim.Adam, {"decoupled_weight_decay": True,
                                                           "weight_decay": 0.1}),
                         {"type": "adamw", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8,
                          "weight_decay": 0.1, "amsgrad": False})

    def refusal(self, optimizer, params=None):
        with self.assertRaises(OptionError) as caught:
            optimizer_spec(optimizer, params)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        return message

    def test_an_optimizer_the_binary_does_not_run_is_refused_naming_those_it_runs(self):
        class MySGD(torch.optim.SGD):
            pass

        for optimizer in (torch.optim.Adadelta, torch.optim.Adamax, torch.optim.ASGD,
                          torch.optim.LBFGS, torch.optim.NAdam, torch.optim.RAdam,
                          torch.optim.Rprop, torch.optim.SparseAdam, MySGD):
            with self.subTest(optimizer=optimizer.__name__):
                self.assertEqual(self.refusal(optimizer),
                                 "optimizer %s is not one the sparktorch binary runs; %s"
                                 % (optimizer.__name__, RUNS_OPTIMIZERS))

    def test_a_keyword_or_value_the_binary_does_not_run_is_refused_naming_it(self):
        cases = [
            (torch.optim.Adam, {"maximize": True}, "optimizer Adam: maximize=True is not one "
             "the sparktorch binary runs; it minimizes the loss"),
            (torch.optim.SGD, {"betas": (0.9, 0.99)}, "optimizer SGD: unknown argument betas; "
             "it takes lr, momentum, dampening, weight_decay, nesterov"),
            (torch.optim.AdamW, {"alpha": 1, "momentum": 0.9}, "optimizer AdamW: unknown "
             "arguments alpha, momentum; it takes lr, betas, eps, weight_decay, amsgrad"),
            (torch.optim.SGD, {"nesterov": True}, "optimizer SGD: Nesterov momentum requires "
             "a momentum and zero dampening"),
            (torch.optim.Adam, {"lr": -1.0}, "optimizer Adam: Invalid learning rate: -1.0"),
        ]
        for optimizer, params, expected in cases:
            with self.subTest(expected=expected):
                self.assertEqual(self.refusal(optimizer, params), expected)

    def test_train_config_holds_both(self):
        self.assertEqual(train_config(nn.MSELoss, torch.optim.SGD, {"lr": 0.2}),
                         {"loss": {"type": "mse"},
                          "optimizer": {"type": "sgd", "lr": 0.2, "momentum": 0.0,
                                        "dampening": 0.0, "weight_decay": 0.0,
                                        "nesterov": False}})


class ScriptModuleTest(unittest.TestCase):
    def test_a_scriptable_module_is_scripted_and_keeps_its_mode(self):
        net = Classifier()
        logged = []
        loaded = torch.jit.load(io.BytesIO(script_module(net, 4, log=logged.append)))
        self.assertEqual(logged, [])
        self.assertTrue(net.training)
        rows = torch.randn(7, 4)
        self.assertTrue(torch.equal(loaded(rows), net(rows)))
        self.assertEqual(set(loaded.state_dict()), set(net.state_dict()))
        self.assertIn("forward", loaded.code)  # scripted code, not a trace of one path

    def test_a_script_module_is_saved_as_it_is(self):
        scripted = torch.jit.script(Classifier())
        loaded = torch.jit.load(io.BytesIO(script_module(scripted)))
        rows = torch.randn(3, 4)
        self.assertTrue(torch.equal(loaded(rows), scripted(rows)))

    def test_an_unscriptable_forward_is_traced_in_eval_mode_and_says_so(self):
        net = KwargsNet()
        logged = []
        loaded = torch.jit.load(io.BytesIO(script_module(net, 10, log=logged.append)))
        self.assertEqual(logged, [
            "sparktorch: torch.jit.script failed on KwargsNet (%s); traced it with an example "
            "row of 10 features in eval mode: control flow that depends on the input is fixed "
            "to this row's path, and dropout and batch norm to eval" % script_error(net)])
        self.assertTrue(net.training)  # restored
        net.eval()
        rows = torch.randn(6, 10)
        self.assertTrue(torch.allclose(loaded(rows), net(rows), atol=1e-6))

    def test_an_unscriptable_forward_without_an_example_row_is_refused(self):
        net = KwargsNet()
        with self.assertRaises(OptionError) as caught:
            script_module(net)
        self.assertEqual(str(caught.exception),
                         "torch.jit.script failed on KwargsNet (%s) and no example row was given "
                         "to trace it with; make forward scriptable (type annotations, no "
                         "**kwargs, torch calls only) or give torchObj as a TorchScript .pt"
                         % script_error(net))
        self.assertNotIn("\n", str(caught.exception))

    def test_a_module_that_fails_to_trace_too_is_refused_with_both_reasons(self):
        net = KwargsNet()
        with self.assertRaises(OptionError) as caught:
            script_module(net, 7, log=self.fail)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        self.assertTrue(message.startswith(
            "torch.jit.script failed on KwargsNet (%s) and so did torch.jit.trace with an "
            "example row of 7 features (" % script_error(net)), message)
        self.assertIn("2x7 and 10x3", message)
        self.assertTrue(message.endswith("); make forward scriptable (type annotations, no "
                                         "**kwargs, torch calls only) or give torchObj as a "
                                         "TorchScript .pt"), message)
        self.assertTrue(net.training)


def write_csv(path, labels, features):
    with open(path, "w") as f:
        for label, row in zip(labels, features):
            f.write(",".join(repr(float(v)) for v in [label] + list(row)) + "\n")


class BinaryTrainsTest(unittest.TestCase):
    """The binary trains the converted model with the converted loss and optimizer."""

    def train(self, net, criterion, optimizer, params, labels, features):
        with tempfile.TemporaryDirectory() as tmp:
            model, config = os.path.join(tmp, "MODEL.pt"), os.path.join(tmp, "MODEL.json")
            rows, out = os.path.join(tmp, "rows.csv"), os.path.join(tmp, "out.pt")
            with open(model, "wb") as f:
                f.write(script_module(net, features.shape[1]))
            spec = train_config(criterion, optimizer, params)
            with open(config, "w") as f:
                json.dump(spec, f)
            write_csv(rows, labels, features)
            done = subprocess.run([SPARKTORCH, "train", "--model", model, "--train-config",
                                   config, "--input", rows, "--output", out, "--epochs", "2",
                                   "--threads", "1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  timeout=240)
            self.assertEqual(done.returncode, 0, done.stderr)
            trained = torch.jit.load(out)
            written = manifest(out)
        before, after = net.state_dict(), trained.state_dict()
        self.assertEqual(set(before), set(after))
        self.assertTrue(any(not torch.equal(before[k], after[k]) for k in before))
        self.assertEqual(written["loss"], spec["loss"])
        for field, value in spec["optimizer"].items():
            self.assertEqual(written["optimizer"][field], value, field)
        return trained, written

    def test_a_classifier_trains_with_cross_entropy_and_sgd_momentum(self):
        torch.manual_seed(1)
        rng = np.random.default_rng(1)
        features = rng.normal(size=(300, 4)).astype(np.float32)
        labels = np.argmax(features[:, :3], axis=1)
        net = Classifier()
        _, written = self.train(net, nn.CrossEntropyLoss(label_smoothing=0.05), torch.optim.SGD,
                                {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-4},
                                labels, features)
        self.assertEqual(written["loss"]["type"], "cross_entropy")
        self.assertEqual((written["optimizer"]["type"], written["optimizer"]["lr"],
                          written["optimizer"]["momentum"], written["optimizer"]["weight_decay"]),
                         ("sgd", 0.05, 0.9, 1e-4))

    def test_a_regression_net_trains_with_mse_and_adamw(self):
        torch.manual_seed(2)
        rng = np.random.default_rng(2)
        features = rng.normal(size=(300, 5)).astype(np.float32)
        labels = features @ np.array([0.5, -1.0, 2.0, 0.0, 0.3], dtype=np.float32) + 1.0
        net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        trained, written = self.train(net, nn.MSELoss(), torch.optim.AdamW, {"lr": 0.01},
                                      labels, features)
        # AdamW's weight_decay is torch's default, 0.01, written out.
        self.assertEqual((written["loss"], written["optimizer"]["type"],
                          written["optimizer"]["lr"], written["optimizer"]["weight_decay"]),
                         ({"type": "mse"}, "adamw", 0.01, 0.01))
        rows = torch.from_numpy(features)
        target = torch.from_numpy(labels).reshape(-1, 1)
        with torch.no_grad():
            self.assertLess(nn.functional.mse_loss(trained(rows), target).item(),
                            nn.functional.mse_loss(net(rows), target).item())


if __name__ == "__main__":
    unittest.main()
