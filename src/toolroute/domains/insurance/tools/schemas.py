"""The field types of the insurance tools' args schemas: each cleans what it is given before validation.

A tool's args schema must accept whatever an LLM or a user puts in a field ("모름", "", 3.5, a list, a
dict) without a ValidationError (see the `clean_*` functions of `_common`). Each type here is a
field's type with its cleaning attached, so that a schema states only the field's type and the
description the LLM reads:

    class ProductArgs(BaseModel):
        product: Text = described("상품명 또는 상품코드 (예: 첫날부터암보험, B001)")
        age: Age = described("피보험자 나이(만 나이)")

The cleaning does not show in the JSON schema: `Text` is `string | null` there, `Age` `integer | null`.
A module with a cleaning of its own (a number said in 만원, '없음' as an answer) defines its type the
same way: `Annotated[int | None, BeforeValidator(_clean_budget)]`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from toolroute.domains.insurance.tools._common import (
    clean_age,
    clean_bool,
    clean_masked,
    clean_names,
    clean_text,
    clean_won,
)

__all__ = ["Age", "Flag", "Masked", "Names", "Text", "Won", "described", "INSURED_AGE"]

# Text, None for blanks and '모름'-like words.
Text = Annotated[str | None, BeforeValidator(clean_text)]
# Text with personal data masked (a not_found answer echoes what it was given).
Masked = Annotated[str | None, BeforeValidator(clean_masked)]
# A list of names from a list or one string ('A, B' is split later by `split_names`).
Names = Annotated[list[str] | None, BeforeValidator(clean_names)]
# An age from 55, '55세', '만 55세'.
Age = Annotated[int | None, BeforeValidator(clean_age)]
# Won from 50000, '5만원', '1억 2천만원'.
Won = Annotated[int | None, BeforeValidator(clean_won)]
# True / False from bools and yes/no words (예, 아니오, 간편 …).
Flag = Annotated[bool | None, BeforeValidator(clean_bool)]

INSURED_AGE = "피보험자 나이(만 나이, 예: 55 또는 '55세')"


def described(description: str) -> Any:
    """An optional field (default None) with the description the LLM reads."""
    return Field(default=None, description=description)
