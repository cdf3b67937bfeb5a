"""The profile's ``guardrails`` section: rules a profile turns off on purpose, each with its reason."""

from __future__ import annotations

from pydantic import Field, field_validator

from blueprints.core.errors import did_you_mean, join_allowed
from blueprints.profile.strict import Strict
from blueprints.review.guardrails import Skip, rule_ids

# Long enough to say why ("we run our own audit pipeline"), short enough to show in a table cell.
REASON_MAX_LENGTH = 300


class SkippedRule(Strict):
    """One guardrail turned off, and why: the plan shows both in every format."""

    rule: str = Field(description="The guardrail id, e.g. AIT008 (`aitrain guardrails` lists them).")
    reason: str = Field(
        min_length=1,
        description=(
            f"Why this stack may break the rule: one line, at most {REASON_MAX_LENGTH} characters, shown in every plan."
        ),
    )

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        known = rule_ids()
        if value not in known:
            hint = did_you_mean(value, known)
            raise ValueError(f"is not a guardrail id; allowed: {join_allowed(known)}" + (f"; {hint}" if hint else ""))
        return value

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        from blueprints.profile.strict import check_one_line

        if not value.strip():
            raise ValueError("is empty: say why this stack may break the rule")
        return check_one_line(value.strip(), REASON_MAX_LENGTH)


class Guardrails(Strict):
    """Which guardrails this profile skips (none by default)."""

    skip: tuple[SkippedRule, ...] = Field(
        default=(),
        description="Rules to skip, each as {rule: AIT0NN, reason: why}; a skip without a reason is refused.",
    )

    @field_validator("skip", mode="before")
    @classmethod
    def _a_list(cls, value: object) -> object:
        # A bare id (`--set guardrails.skip=AIT008`) cannot carry the reason every skip needs.
        if isinstance(value, (str, dict)):
            raise ValueError(
                "is a list of {rule: AIT0NN, reason: why}: in YAML `skip: [{rule: AIT008, reason: …}]`; with --set or "
                "`pulumi config set --path`, guardrails.skip[0].rule=AIT008 and guardrails.skip[0].reason=…"
            )
        return value

    @field_validator("skip")
    @classmethod
    def _once_each(cls, value: tuple[SkippedRule, ...]) -> tuple[SkippedRule, ...]:
        ids = [s.rule for s in value]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"skips {', '.join(repeated)} more than once; give each rule once, with one reason")
        return value

    def skips(self) -> tuple[Skip, ...]:
        """The skips as the guardrails take them."""
        return tuple(Skip(s.rule, s.reason) for s in self.skip)
