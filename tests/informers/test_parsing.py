"""What the informer says about answers that are not what a list or watch returns."""

from __future__ import annotations

import pytest

from componentbase.informers import BadResponse
from componentbase.informers._listwatch import (
    _parse_events,
    _parse_list,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("body", "message"), [
    (b"<html>oops</html>", "list pods: response is not JSON"),
    (b'{"kind": "PodList", "metadata": {"resourceVersion": "1"}}', "list pods: response has no items list"),
    (b'{"kind": "PodList", "items": []}', "list pods: response has no metadata.resourceVersion"),
    (b'{"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [{"spec": {}}]}',
     "list pods: an item has no metadata"),
])
def test_bad_list_answers_are_named(body: bytes, message: str) -> None:
    with pytest.raises(BadResponse, match=message) as err:
        _parse_list(body, "pods")
    assert "\n" not in str(err.value)


def test_list_items_get_the_kind_real_servers_leave_out() -> None:
    page = _parse_list(b'{"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9",'
                       b' "continue": "t"}, "items": [{"metadata": {"name": "p"}}]}', "pods")
    assert page.items == [{"metadata": {"name": "p"}, "kind": "Pod", "apiVersion": "v1"}]
    assert (page.resource_version, page.continue_token) == ("9", "t")


def test_watch_lines_are_parsed_together_and_a_bad_one_is_named() -> None:
    lines = [b'{"type": "ADDED", "object": {"metadata": {"name": "a"}}}',
             b'{"type": "DELETED", "object": {"metadata": {"name": "a"}}}']
    assert [e["type"] for e in _parse_events(lines)] == ["ADDED", "DELETED"]
    with pytest.raises(BadResponse, match="watch: malformed event"):
        _parse_events([lines[0], b'{"type": "ADDED", "obj'])
    with pytest.raises(BadResponse, match="watch: an event is not a JSON object"):
        _parse_events([lines[0], b"[1, 2]"])
