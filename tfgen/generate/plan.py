"""Planning: turn a validated Spec into a typed view of what the templates emit.

Every decision about the generated code is made here (with tfgen.generate.decisions); the views
are in tfgen.generate.views, the code text of spec values in tfgen.generate.code, and the
templates lay the view out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import PurePosixPath

from tfgen.generate.algorithms.distillation import algorithm_losses, distillation_view
from tfgen.generate.code import argument, keras_call, literal
from tfgen.generate.code_lines import (
    BUILD_OPTIMIZER,
    CHUNK_ENDS,
    CLIP_LINES,
    COMPILE_LINES,
    LOSS_TOTAL_CODE,
    STRATEGY_LINES,
)
from tfgen.generate.constants_plan import option_lines, parse_arguments, run_setting_lines, setting_lines
from tfgen.generate.custom_plan import custom_view
from tfgen.generate.decisions import Jit, Placement, resolve_in_memory, resolve_jit, strings_reason
from tfgen.generate.example_weights import example_weights_view
from tfgen.generate.identity import data_files, source_files, state_sha256
from tfgen.generate.model_plan import model_view, model_words
from tfgen.generate.phase_plan import phase_view, rate_factors
from tfgen.generate.plan_data import data_sources, load_data_returns, test_fields
from tfgen.generate.predict_plan import predict_view
from tfgen.generate.runtime import RUNTIME_VERSION, missing_line
from tfgen.generate.source_plan import description, source_templates, source_view
from tfgen.generate.views import (
    Batching,
    Boundary,
    Cache,
    CheckpointView,
    ClipKind,
    Clipping,
    DataView,
    DistributionView,
    FieldView,
    LoggingView,
    LossTotal,
    OptimizerView,
    OutputView,
    Padding,
    Part,
    PrecisionView,
    Profile,
    RuntimeView,
    StepView,
    StrategyKind,
    TrackerArgs,
    TrackersView,
    View,
    Weighting,
)
from tfgen.generate.wiring import Wiring, model_wiring
from tfgen.sources import unit_of
from tfgen.spec.models import Spec
from tfgen.spec.names import has_test, has_validation, metric_keys, output_names
from tfgen.spec.script_rules import imported_references

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


# Strategies whose replicas each compute a part of the batch's gradients.
MULTI_REPLICA = {"mirrored": True, "multi_worker_mirrored": True}
# Loss weightings learned or moved while training: a LossWeighting module, checkpointed.
ADAPTIVE = frozenset({Weighting.UNCERTAINTY, Weighting.EMA_RATIO})


def make_view(
    spec: Spec,
    *,
    spec_path: str,
    spec_sha256: str,
    version: str,
    spec_dir: str = ".",
    vendored: bool = False,
    commands: bool = True,
) -> View:
    """`spec_dir`: the spec's folder relative to the script's (POSIX), where the script looks
    for user modules after sys.path and the working directory; `vendored`: the script imports
    the runtime copied beside it (`tfgen build --vendor`), not the installed one; `commands`:
    `predict` and `evaluate` where the spec's data allows them (not for another algorithm's
    spec seen as a supervised one)."""
    wiring = model_wiring(spec, output_names(spec))
    outputs = _outputs(spec, wiring)
    view = View(
        # The path lands in a comment: escape anything (a newline, say) that could end it.
        header={
            "version": version,
            "spec_path": json.dumps(spec_path, ensure_ascii=False)[1:-1],
            "sha256": spec_sha256,
            "state_sha256": state_sha256(spec),
        },
        runtime=RuntimeView(RUNTIME_VERSION, missing_line(f"{PurePosixPath(spec_path).stem}.py"), vendored),
        made_by=_made_by(spec, spec_path, version),
        docstring=_docstring(spec, outputs),
        name=spec.name,
        seed=spec.seed,
        output_dir=literal(spec.output_dir or f"runs/{spec.name}"),
        spec_dir=literal(spec_dir) if imported_references(spec) else None,
        epochs=spec.train.epochs,
        inputs=[_field(n, i.shape, i.dtype, _input_classes(i)) for n, i in spec.model.inputs.items()],
        targets=[_field(n, t.shape, t.dtype, t.class_count, t.class_names) for n, t in spec.targets.items()],
        data=_data(spec, wiring),
        model=model_view(spec, wiring, outputs, algorithm_losses(spec)),
        optimizer=optimizer_view(spec),
        precision=PrecisionView(
            policy=None if spec.precision == "float32" else spec.precision,
            loss_scaling=spec.precision == "mixed_float16",
            warns_without_gpu=spec.precision == "mixed_float16",
            check_builder_outputs=spec.precision != "float32" and spec.model.builder is not None,
            compute_dtype=spec.precision.removeprefix("mixed_"),
        ),
        distribution=DistributionView(
            kind=StrategyKind(spec.strategy.type),
            device=literal(spec.strategy.device),
            devices=literal(spec.strategy.devices),
            cpu_replicas=spec.strategy.cpu_replicas,
            communication=spec.strategy.communication.upper(),
            timeout=spec.strategy.timeout_seconds if spec.strategy.type == "multi_worker_mirrored" else None,
            multi_replica=MULTI_REPLICA.get(spec.strategy.type, False),
            lines=STRATEGY_LINES[StrategyKind(spec.strategy.type)](spec.strategy),
        ),
        step=_step(spec, outputs),
        trackers=_trackers(spec),
        checkpoint=CheckpointView(
            every_epochs=_every_epochs(spec),
            every_steps=spec.checkpoint.every_steps,
            keep=spec.checkpoint.keep,
            fresh=spec.checkpoint.resume == "never",
            exports=literal([kind for kind in ("keras", "saved_model", "tflite") if kind in spec.checkpoint.export]),
            periodic=bool(spec.checkpoint.every_steps or _every_epochs(spec)),
        ),
        logging=LoggingView(
            tensorboard=spec.logging.tensorboard,
            gradient_norm=spec.logging.tensorboard,
            every_steps=spec.logging.every_steps,
            profile=Profile(spec.logging.profile.start_step, spec.logging.profile.steps)
            if spec.logging.profile
            else None,
            validation_every=spec.train.validation_every
            if has_validation(spec) and spec.train.validation_every > 1
            else None,
            report=spec.logging.report,
            **_confusion(spec),
        ),
        chunk_ends=_chunk_ends(spec),
        weights=example_weights_view(spec),
        custom=custom_view(spec),
        phases=phase_view(spec),
        distillation=distillation_view(spec),
    )
    view = replace(view, predict=predict_view(spec, view) if commands else None)
    return replace(
        view,
        options=option_lines(view),
        parse_arguments=parse_arguments(view),
        settings=setting_lines(view),
        run_settings=run_setting_lines(view),
    )


def _chunk_ends(spec: Spec) -> list[str]:
    """Where a chunk of steps must end: at saves, summaries, the profile window's edges."""
    used = {
        Boundary.CHECKPOINT: spec.checkpoint.every_steps,
        Boundary.SUMMARIES: spec.logging.tensorboard,
        Boundary.PROFILE: spec.logging.profile,
    }
    return [CHUNK_ENDS[boundary] for boundary, needed in used.items() if needed]


def _confusion(spec: Spec) -> dict:
    """Where the confusion matrices come from: the test data, else the validation data (none
    without a class target or either); and the two-class targets whose outputs are logits
    (a one-unit output is then class 1 above 0, not 0.5)."""
    split = None
    if any(target.classes for target in spec.targets.values()):
        split = "test" if has_test(spec) else "validation" if has_validation(spec) else None
    batches = "validation_pipeline(validation)" if split == "validation" else None
    logits = tuple(name for name in spec.targets if _binary_logits(spec, name))
    return {
        "confusion": split,
        "confusion_batches": batches,
        "confusion_logits": f", logits={literal(logits)}" if logits else "",
    }


def _binary_logits(spec: Spec, name: str) -> bool:
    """Whether target `name` has two classes and its loss takes logits."""
    classes = spec.targets[name].classes
    count = classes if isinstance(classes, int) else len(classes or ())
    loss = spec.losses.get(name)
    return count == 2 and loss is not None and bool(loss.args.get("from_logits"))


def _made_by(spec: Spec, spec_path: str, version: str) -> str:
    """The script's MADE_BY: its spec, the spec's sha256, the tfgen that wrote it, and the
    data files it reads (whose fingerprints a run records)."""
    made_by = f'"spec": {literal(spec_path)}, "spec_sha256": SPEC_SHA256'
    files = data_files(spec)
    if files:
        made_by += f', "data_files": {literal(files)}'
    if all(unit_of(source).drawn for source in data_sources(spec)):
        made_by += ', "all_synthetic": True'  # --synthetic changes nothing
    return f'{{{made_by}, "tfgen": {literal(version)}}}'


def _every_epochs(spec: Spec) -> int | None:
    every = spec.checkpoint.every_epochs
    return every if not spec.checkpoint.every_steps and every and every > 1 else None


def _input_classes(item) -> int | None:
    """Synthetic integer inputs draw from [0, vocabulary) (or {0, 1} with no vocabulary), string
    inputs their words from `vocabulary` words (or the support module's default)."""
    if item.vocabulary:
        return item.vocabulary
    return None if item.dtype in ("uint8", "bool", "string", *FLOAT_DTYPES) else 2


def _field(name: str, shape: list, dtype: str, classes: int | None, names: tuple | None = None) -> FieldView:
    listed = None if names is None else literal(names)
    return FieldView(name=name, shape=literal(tuple(shape)), dtype=dtype, classes=classes, names=listed)


def _outputs(spec: Spec, wiring: Wiring) -> list[OutputView]:
    metrics: dict[str, list[tuple[str, str]]] = {}
    for output, key, metric in metric_keys(spec):
        metrics.setdefault(output, []).append((key, keras_call(metric, "metrics")))
    views = []
    for name in output_names(spec):
        views.append(
            OutputView(
                name=name,
                layers=[step.line() for step in wiring.heads[name]],
                loss=keras_call(spec.losses[name], "losses", {"reduction": "None"}),
                mean_per_example=len(spec.targets[name].shape) >= 2,
                loss_key=f"{name}_loss",
                metrics=metrics.get(name, []),
            )
        )
    return views


def _data(spec: Spec, wiring: Wiring) -> DataView:
    train, validation = spec.data.train, spec.data.validation
    validation_batch = (validation.batch_size if validation else None) or train.batch_size
    if train.bucket_by_sequence_length:
        batching = Batching.BUCKETED
    elif train.padded_batch:
        batching = Batching.PADDED
    else:
        batching = Batching.BATCH
    variable = batching is not Batching.BATCH
    shard_policy, shard_reason = _shard_policy(spec)
    bucket = train.bucket_by_sequence_length
    placement = resolve_in_memory(spec)
    weights = example_weights_view(spec)
    npz_weights = weights.sample_weight if weights.npz_weights else None
    tests = test_fields(spec, lambda source, part: source_view(source, part, spec, npz_weights))
    sources = [
        source_view(train.source, Part.TRAIN, spec, npz_weights),
        *([source_view(validation.source, Part.VALIDATION, spec, npz_weights)] if validation else []),
        *([tests["test"]] if "test" in tests else []),
    ]
    return DataView(
        train=sources[0],
        validation=sources[1] if validation else None,
        split=spec.data.validation_split,
        stratify=spec.data.stratify,
        has_validation=has_validation(spec),
        batch_size=train.batch_size,
        validation_batch_size=validation_batch,
        shuffle=train.shuffle,
        drop_remainder=train.drop_remainder,
        cache_train=_cache(train.cache, train.source),
        cache_validation=_cache(validation.cache, validation.source) if validation else None,
        batching=batching,
        padded_batch=_padded(spec, train.padded_batch),
        validation_padded=_validation_padded(spec, variable),
        bucketing={
            "input": literal(bucket.input or next(iter(spec.model.inputs))),
            "boundaries": literal(bucket.boundaries),
            "batch_sizes": literal(bucket.batch_sizes),
        }
        if bucket
        else None,
        preprocess=[step.code for step in wiring.pipeline["preprocess"]],
        augment=[step.code for step in wiring.pipeline["augment"]],
        augment_optional=bool(wiring.adapted.batches and train.augment),
        layer_input=next(iter(spec.model.inputs)),
        placement=placement,
        shard_policy=shard_policy,
        shard_reason=shard_reason,
        synthetic_train=train.source.examples if unit_of(train.source).drawn else 16 * train.batch_size,
        synthetic_validation=validation.source.examples
        if validation and unit_of(validation.source).drawn
        else 4 * validation_batch,
        validation_steps=spec.train.validation_steps,
        drawn=[view for view, source in zip(sources, data_sources(spec), strict=True) if unit_of(source).drawn],
        read=[view for view, source in zip(sources, data_sources(spec), strict=True) if not unit_of(source).drawn],
        **tests,
        **_loaders(spec),
        **_pipelines(spec, placement),
    )


def _loaders(spec: Spec) -> dict[str, bool | str]:
    """The DataView's choices of what load_data and train_pipeline are made of."""
    data, train = spec.data, spec.data.train
    types = {source.type for source in data_sources(spec)}
    split_function = "split_files" if unit_of(train.source).folder else "split_arrays"
    return {
        "splits_beside_test": bool(data.validation_split) and (data.test is not None or data.test_split is not None),
        "split_function": split_function,
        "returns": load_data_returns(spec, split_function),
        "preprocessed_input": bool(train.preprocess) and spec.model.builder is None,
        "source_templates": source_templates(types),
        "imports_zipfile": any("zipfile" in unit_of(source).script_imports for source in data_sources(spec)),
    }


def _pipelines(spec: Spec, placement: Placement) -> dict[str, bool]:
    """The DataView's choices of how the pipelines read each part and where layers run on it."""
    data, train = spec.data, spec.data.train
    folder = unit_of(train.source).folder
    shuffles_files = folder and bool(train.shuffle) and train.cache is False
    in_memory = placement is not Placement.STREAM
    return {
        "lists_train_files": folder,
        "lists_validation_files": unit_of((data.validation or train).source).folder,
        "lists_test_files": unit_of((data.test or train).source).folder,
        "shuffles_files": shuffles_files,
        "decodes_in_order": folder and not shuffles_files,
        "maps_layers": bool(train.preprocess or train.augment),
        "preprocess_in_step": in_memory and bool(train.preprocess),
        "augment_in_step": in_memory and bool(train.augment),
        "prepare_in_step": in_memory and bool(train.preprocess or train.augment),
    }


def optimizer_view(spec: Spec) -> OptimizerView:
    optimizer = spec.optimizer
    rate = optimizer.args.get("learning_rate")
    rate_code = keras_call(rate, "schedules") if isinstance(rate, dict) else literal(rate)
    warmup = spec.train.warmup
    plateau = spec.train.reduce_on_plateau
    call = keras_call(optimizer, "optimizers")
    if warmup is not None or plateau is not None or rate_factors(spec):  # WarmUp/ScaledOnPlateau/ByPhase wrap it
        others = [f"{arg}={argument(arg, value)}" for arg, value in optimizer.args.items() if arg != "learning_rate"]
        call = f"keras.optimizers.{optimizer.type}({', '.join(['learning_rate=learning_rate', *others])})"
    by_phase = rate_factors(spec)
    parameters, arguments, docstring = BUILD_OPTIMIZER[plateau is not None, by_phase]
    return OptimizerView(
        call=call,
        learning_rate=rate_code,
        warmup={"steps": warmup.steps, "initial": literal(warmup.initial)} if warmup else None,
        plateau={k: literal(v) for k, v in plateau.model_dump().items()} if plateau else None,
        scaled_by_phase=by_phase,
        rate_wrapped=warmup is not None or plateau is not None or by_phase,
        parameters=parameters,
        arguments=arguments,
        docstring=docstring,
    )


def _step(spec: Spec, outputs: list[OutputView]) -> StepView:
    clip = spec.train.gradient_clipping
    clipping = None
    if clip is not None:
        kind = next(k for k in ClipKind if getattr(clip, k.value) is not None)
        clipping = Clipping(kind, getattr(clip, kind.value))
    weights = {o.name: spec.losses[o.name].weight for o in outputs}
    if spec.loss_weighting.type != "static":
        weighting = Weighting(spec.loss_weighting.type)
    elif all(w == 1.0 for w in weights.values()):
        weighting = Weighting.UNIT
    else:
        weighting = Weighting.STATIC
    train = spec.data.train
    return StepView(
        jit=resolve_jit(spec),
        compile_lines=_compile_lines(resolve_jit(spec), strings_reason(spec)),
        accumulation=spec.train.gradient_accumulation_steps,
        accumulates=spec.train.gradient_accumulation_steps > 1,
        variable_batches=not train.drop_remainder or train.bucket_by_sequence_length is not None,
        allow_unused=spec.train.allow_unused_variables,
        skip_nonfinite=spec.train.on_nonfinite == "skip",
        check_numerics=spec.debug.check_numerics,
        clipping=clipping,
        clip_line=CLIP_LINES[clipping.kind] if clipping else "",
        weighting=weighting,
        weighting_module=weighting in ADAPTIVE,
        updates_weighting=weighting is Weighting.EMA_RATIO,
        loss_total=_loss_total(weighting),
        loss_total_code=LOSS_TOTAL_CODE[_loss_total(weighting)],
        weights=None if weighting is Weighting.UNIT else literal(weights),
        ema_decay=spec.loss_weighting.decay,
        steps_per_execution=None if spec.train.steps_per_execution == "auto" else spec.train.steps_per_execution,
        deterministic=spec.deterministic,
        sharpness_aware=spec.train.sharpness_aware.rho if spec.train.sharpness_aware else None,
        optimised_loss="scaled_loss" if spec.precision == "mixed_float16" else "loss",
        state_losses=_state_losses(spec),
        **_gradient_route(spec, clipping is not None, weighting),
    )


def _state_losses(spec: Spec) -> str:
    """RunState's argument: the outputs' losses (LOSSES), and the algorithm's beside them."""
    outputs = custom_view(spec).losses_code
    added = algorithm_losses(spec)
    return f"[*{outputs}, {', '.join(literal(name) for name in added)}]" if added else outputs


def _gradient_route(spec: Spec, clipped: bool, weighting: Weighting) -> dict[str, bool]:
    """Where the step sums the gradients across replicas, and what it keeps for after the update.

    Keras's LossScaleOptimizer checks the gradients it is given for inf/NaN: under several
    replicas they are summed first (by the clipping, or on their own), so that it skips a bad
    step on every replica.
    """
    summed_for_loss_scale = spec.precision == "mixed_float16" and MULTI_REPLICA.get(spec.strategy.type, False)
    skips = spec.train.on_nonfinite == "skip"
    return {
        "sums_for_loss_scale": summed_for_loss_scale and not clipped,
        "gradients_summed_across_replicas": summed_for_loss_scale or clipped,
        "keeps_task_losses": not skips or weighting is Weighting.EMA_RATIO,
        "stops_on_nonfinite": not skips,
    }


def _compile_lines(jit: Jit, not_compiled: str | None) -> list[str]:
    """The lines above `def train_step`: its decorator, or why it is never XLA-compiled."""
    reason = [f"# Not XLA-compiled: {not_compiled}."] if not_compiled else []
    return COMPILE_LINES.get(jit, reason)


def _loss_total(weighting: Weighting) -> LossTotal:
    if weighting in ADAPTIVE:
        return LossTotal.LEARNED
    return LossTotal.WEIGHTED if weighting is Weighting.STATIC else LossTotal.SUM


def _trackers(spec: Spec) -> TrackersView:
    stopping = spec.train.early_stopping
    early = None
    if stopping is not None:
        defaults = {"patience": None, "mode": "auto", "min_delta": 0.0, "baseline": None, "start_from_epoch": 0}
        changed = {k: literal(getattr(stopping, k)) for k, d in defaults.items() if getattr(stopping, k) != d}
        early = TrackerArgs(literal(stopping.monitor), changed)
    plateau = spec.train.reduce_on_plateau
    keep = spec.checkpoint.keep_best
    return TrackersView(
        early_stopping=early,
        restore_best=bool(stopping and stopping.restore_best_weights),
        plateau=_plateau_args(plateau) if plateau else None,
        keep_best=TrackerArgs(literal(keep.monitor), {"mode": literal(keep.mode)} if keep.mode != "auto" else {})
        if keep
        else None,
        best_weights=keep is not None or bool(stopping and stopping.restore_best_weights),
    )


def _plateau_args(plateau) -> TrackerArgs:
    options = {k: literal(v) for k, v in plateau.model_dump().items() if k != "monitor"}
    return TrackerArgs(literal(plateau.monitor), options)


def _docstring(spec: Spec, outputs: list[OutputView]) -> list[str]:
    described = description(spec.data.train.source)
    heads = ", ".join(f"`{o.name}` ({spec.losses[o.name].type})" for o in outputs)
    held_out = "stratified " if spec.data.stratify else ""
    return [
        f"Train `{spec.name}` with a custom TensorFlow training loop.",
        "",
        f"Data: {described}"
        + (f"; a {held_out}random part held out for validation." if spec.data.validation_split else "."),
        f"Model: {model_words(spec)}; outputs {heads}.",
        f"Optimizer: {spec.optimizer.type}" + ("; early stopping." if spec.train.early_stopping else "."),
    ]


def _shard_policy(spec: Spec) -> tuple[str | None, str]:
    if spec.strategy.type != "multi_worker_mirrored":
        return None, ""
    policy = spec.data.shard_policy
    if policy == "auto":
        if unit_of(spec.data.train.source).file_shards:
            return "FILE", "whole files per worker, for a file source"
        return "DATA", "every worker reads all and keeps its share, for an in-memory source"
    return policy.upper(), "as the spec sets `data.shard_policy`"


def _padded(spec: Spec, padded) -> Padding | None:
    """The options of padded_batch (features, targets); None: no padding."""
    if padded is None:
        return None
    groups = [spec.model.inputs, spec.targets]
    shapes = values = None
    if padded.padded_shapes:
        per_group = [{n: tuple(padded.padded_shapes.get(n, item.shape)) for n, item in g.items()} for g in groups]
        shapes = literal(tuple(per_group))
    if padded.padding_values:
        values = "(" + ", ".join(_padding_values(g, padded.padding_values) for g in groups) + ")"
    return Padding(shapes=shapes, values=values)


def _padding_values(group: dict, named: dict) -> str:
    """`{name: tf.constant(value, tf.<dtype>), ...}`: a value of each component's own dtype (a bare
    Python 0 is int32, which tf.data refuses for an int64 component); None keeps tf.data's default."""
    entries = []
    for name, item in group.items():
        if name in named:
            entries.append(f"{literal(name)}: tf.constant({literal(_typed(named[name], item.dtype))}, tf.{item.dtype})")
        else:
            entries.append(f"{literal(name)}: None")
    return "{" + ", ".join(entries) + "}"


def _typed(value: float | str, dtype: str) -> float | int | bool | str:
    if dtype == "string":
        return value
    if dtype == "bool":
        return bool(value)
    return float(value) if dtype.startswith(("float", "bfloat")) else int(value)


def _validation_padded(spec: Spec, variable: bool) -> Padding | None:
    """padded_batch options for validation batches; None: plain batches."""
    validation = spec.data.validation
    if validation is not None and validation.padded_batch is not None:
        return _padded(spec, validation.padded_batch)
    return Padding() if variable else None


def _cache(cache: bool | str, source) -> Cache | None:
    """In memory, or in a file kept only for the spec and data it was made of (the spec's
    STATE_SHA256 and the source's files: `rt.cached` checks them)."""
    if cache is False:
        return None
    if not (isinstance(cache, str) and cache):
        return Cache()
    file = literal(cache)
    made_of = f"STATE_SHA256, {literal(source_files(source))}"
    return Cache(arguments=f", {file}, {made_of}")
