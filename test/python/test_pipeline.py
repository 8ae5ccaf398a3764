"""Pipelines from objects: tilemlir.compile hands a Target and PipelineOptions to the passes,
and tilemlir-opt's text becomes the same objects and the same steps (tilemlir/pipeline.py,
tilemlir/tools/pass_pipeline.py)."""

import pickle

import pytest
from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.pipeline import (DEFAULT_TARGET, PipelineError, PipelineOptions, declared_targets,
                               dispatch_pass, tile_to_ptx)
from tilemlir.target import Target, TargetError
from tilemlir.tools.pass_pipeline import parse_pipeline


def _shape(steps) -> list[tuple[str, str]]:
    """Steps as comparable data: a tilemlir pass by its name, an upstream one by its text."""
    return [(kind, step.__name__ if kind == "py" else step) for kind, step in steps]


@pytest.mark.parametrize("text,options", [
    ("tile-to-ptx", PipelineOptions()),
    ("tile-to-ptx{chip=sm_80}", PipelineOptions(Target("sm_80"))),
    ("tile-to-ptx{chip=sm_90a ptx=86 opt-level=1 line-info=true}",
     PipelineOptions(Target("sm_90a", 86), 1, True)),
])
def test_text_and_objects_build_the_same_pipeline(text, options):
    assert _shape(parse_pipeline(f"builtin.module({text})")) == _shape(tile_to_ptx(options))


def test_the_target_reaches_the_upstream_passes_as_given():
    upstream = [step for kind, step in tile_to_ptx(PipelineOptions(Target("sm_100a", 87), 2))
                if kind == "mlir"]
    assert any("nvvm-attach-target{chip=sm_100a features=+ptx87 O=2}" in s for s in upstream)


def test_options_are_checked_when_made():
    with pytest.raises(PipelineError, match="opt_level must be 0, 1, 2 or 3, got 7"):
        PipelineOptions(opt_level=7)
    with pytest.raises(PipelineError, match="line_info must be True or False"):
        PipelineOptions(line_info="yes")
    with pytest.raises(TypeError, match="target must be a tilemlir.target.Target, got str"):
        PipelineOptions("sm_80")
    with pytest.raises(TargetError, match="unknown PTX ISA version 999"):
        Target("sm_90a", 999)
    assert Target("sm_90a") == Target("sm_90a", 80) == DEFAULT_TARGET


def test_options_cross_to_the_compiler_process_as_they_are():
    options = PipelineOptions(Target("sm_100a", 88), 0, True)
    assert pickle.loads(pickle.dumps(options)) == options


def test_a_gpu_modules_own_target_is_read_from_its_nvvm_target():
    with make_context():
        module = ir.Module.parse('gpu.module @m [#nvvm.target<chip = "sm_80", '
                                 'features = "+ptx81">, #nvvm.target<chip = "sm_90a">] {}')
        gpu_module = module.body.operations[0].operation
        assert declared_targets(gpu_module) == [Target("sm_80", 81), Target("sm_90a")]
        with pytest.raises(TargetError, match="names no PTX version"):
            declared_targets(gpu_module, serialised=True)


def test_pass_builders_take_targets_not_text():
    [(kind, tile_dispatch)] = dispatch_pass(Target("sm_80"))
    assert kind == "py" and tile_dispatch.__name__ == "tile_dispatch"
