"""The card faces served to the table (``service/web/static/cards/``) are the generator's
output, one per card, and safe under the service's Content-Security-Policy."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from service.web import cardfaces

SVG = "{http://www.w3.org/2000/svg}"


def test_the_committed_faces_are_what_the_generator_draws():
    faces = cardfaces.all_faces()
    on_disk = {path.name for path in cardfaces.OUT.glob("*.svg")}
    assert on_disk == {face.name for face in faces}, "run python -m service.web.cardfaces"
    for face in faces:
        assert (cardfaces.OUT / face.name).read_text(encoding="utf-8") == face.svg, face.name


def test_every_card_has_a_face_named_as_spoken():
    names = {face.name for face in cardfaces.all_faces()}
    for suit in "CDSH":
        for rank in "23456789TJQKA":
            assert f"{rank}{suit}.svg" in names
    queen = ET.fromstring(cardfaces.face("QS").svg)
    assert queen.get("aria-label") == "queen of spades"
    assert queen.find(f"{SVG}title").text == "queen of spades"


def test_faces_draw_suits_as_paths_with_no_style_and_no_script():
    for face in cardfaces.all_faces():
        root = ET.fromstring(face.svg)
        tags = {element.tag.removeprefix(SVG) for element in root.iter()}
        assert not tags & {"style", "script", "foreignObject", "image"}, face.name
        assert all("style" not in element.attrib for element in root.iter()), face.name
        # No suit glyph from a font: the symbols are paths (a missing font draws a box).
        assert not re.search("[\u2660-\u2667]", face.svg), face.name
        for element in root.iter():
            for value in element.attrib.values():
                assert not value.startswith(("http:", "https:", "//")), face.name


def test_a_number_card_has_as_many_pips_as_its_rank():
    for rank, count in (("2", 2), ("7", 7), ("T", 10)):
        root = ET.fromstring(cardfaces.face(f"{rank}H").svg)
        uses = [e for e in root.iter(f"{SVG}use")]
        assert len(uses) == count + 2, rank  # and a small suit in each corner
