"""Job validation: strict types, numbers written as 1.2e9, and errors that say where, what and how to fix."""

from __future__ import annotations

import pytest

from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.core.errors import UserInputError

REGIONS = {"cn-shanghai": None, "cn-beijing": None}


def problems(data, **kw):
    with pytest.raises(UserInputError) as info:
        parse_job(data, **kw)
    return info.value.problems, info.value.render()


def test_numbers_as_strings_are_accepted():
    j = parse_job({"model_kind": "transformer", "params": "1.2e9", "tokens": "2_000_000", "max_nodes": "16"})
    assert j.params == 1.2e9 and j.tokens == 2e6 and j.max_nodes == 16


def test_yaml_exponent_without_dot_is_a_number(tmp_path):
    # PyYAML reads 1.2e9 (no dot before e... no sign) as a string; the job accepts it anyway.
    path = tmp_path / "job.yaml"
    path.write_text("model_kind: transformer\nparams: 1.2e9\ntokens: 2e12\n", encoding="utf-8")
    j = parse_job(load_job_dict(path))
    assert j.params == 1.2e9 and j.tokens == 2e12


def test_unknown_key_gets_did_you_mean():
    probs, text = problems({"model_kind": "transformer", "params": 1e9, "tokens": 1e9, "deadline_day": 3})
    assert probs[0].path == "deadline_day"
    assert "did you mean 'deadline_days'?" in text
    assert "allowed keys here" in text


def test_every_problem_is_reported_together():
    probs, _ = problems({"model_kind": "transformr", "params": -1, "precision": "bf32"})
    paths = {p.path for p in probs}
    assert {"model_kind", "params", "precision"} <= paths


def test_transformer_needs_tokens():
    _, text = problems({"model_kind": "transformer", "params": 1e9})
    assert "needs tokens" in text


def test_cnn_needs_forward_gflops_and_samples():
    _, text = problems({"model_kind": "cnn", "params": 25e6})
    assert "forward_gflops and samples" in text


def test_tokens_and_samples_are_exclusive():
    _, text = problems({"model_kind": "transformer", "params": 1e9, "tokens": 1e9, "samples": 10})
    assert "Choose a single approach" in text


def test_bad_number_text():
    probs, text = problems({"model_kind": "transformer", "params": "lots", "tokens": 1e9})
    assert probs[0].path == "params" and "must be a number" in text


def test_bool_is_not_a_number():
    _, text = problems({"model_kind": "transformer", "params": True, "tokens": 1e9})
    assert "not true/false" in text


def test_unknown_region_with_hint():
    probs, text = problems(
        {"model_kind": "transformer", "params": 1e9, "tokens": 1e9, "region": "cn-shangai"}, regions=REGIONS
    )
    assert probs[0].path == "region" and "did you mean 'cn-shanghai'?" in text


def test_name_rules():
    _, text = problems({"name": "Bad_Name", "model_kind": "transformer", "params": 1e9, "tokens": 1e9})
    assert "lowercase letters" in text


def test_not_a_mapping():
    _, text = problems([1, 2])
    assert "mapping" in text


def test_overrides_replace_file_values(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("model_kind: transformer\nparams: 1e9\ntokens: 1e9\nregion: cn-beijing\n", encoding="utf-8")
    data = load_job_dict(path, {"region": "cn-shanghai", "tokens": None})
    assert data["region"] == "cn-shanghai"
    assert data["tokens"] == "1e9"  # a None flag leaves the file value; PyYAML reads 1e9 as text


def test_invalid_yaml_is_a_user_error(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("model_kind: [unclosed\n", encoding="utf-8")
    with pytest.raises(UserInputError) as info:
        load_job_dict(path)
    assert "not valid YAML" in info.value.render()


def test_every_field_has_a_description():
    from blueprints.advisor.job import Job

    assert all(f.description for f in Job.model_fields.values())
