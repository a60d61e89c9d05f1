"""Quantities parse, add and print as apimachinery's resource.Quantity does."""

import pytest

from tf_operator.k8s.quantity import Quantity, QuantityError, is_quantity


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("0", "0"),
        ("0Mi", "0"),
        ("1", "1"),
        ("1000", "1k"),
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1.1", "1100m"),
        ("100m", "100m"),
        ("1k", "1k"),
        ("1M", "1M"),
        ("1024", "1024"),
        ("1Ki", "1Ki"),
        ("1.5Gi", "1536Mi"),
        ("0.1Ki", "102400m"),  # not whole: decimal
        ("512Ki", "512Ki"),
        ("1024Mi", "1Gi"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("12e6", "12e6"),
        ("1n", "1n"),
        ("0.0000000001", "1n"),  # rounded up to nano units
        (2, "2"),
        (0.25, "250m"),
    ],
)
def test_canonical_text(text, canonical):
    assert str(Quantity.parse(text)) == canonical


@pytest.mark.parametrize(
    "terms, total",
    [
        (["100m", "200m"], "300m"),
        (["2", "500m"], "2500m"),
        (["1Gi", "512Mi"], "1536Mi"),
        (["1Gi", "1Gi"], "2Gi"),
        (["500m", "1Gi"], "1073741824500m"),  # the first term's format
        (["1Gi", "1"], "1073741825"),  # binary, but no longer a whole number of Ki
    ],
)
def test_sums_keep_the_first_terms_format(terms, total):
    quantities = [Quantity.parse(t) for t in terms]
    result = quantities[0]
    for q in quantities[1:]:
        result = result + q
    assert str(result) == total


@pytest.mark.parametrize("bad", ["", "two", "1.2.3", "1Gb", "1e1.5", "--1", True, None, [1]])
def test_what_is_no_quantity(bad):
    assert not is_quantity(bad)
    with pytest.raises(QuantityError):
        Quantity.parse(bad)
