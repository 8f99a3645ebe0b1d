"""The pandas frames of the library API, with the details.csv values and proper dtypes."""

from helpers import EXAMPLES, PUBLIC

from scorer import score_submission


def test_turn_and_dialogue_frames(rwn, tmp_path):
    result = score_submission(PUBLIC, EXAMPLES / "realistic", thesaurus=rwn)
    frame = result.to_frame()
    assert (
        len(frame) == 66
        and str(frame["turn"].dtype) == "int64"
        and str(frame["exact_search"].dtype) == "bool"
    )
    assert frame["meteor"].tolist() == [t.meteor for t in result.turns]
    assert list(frame["type"].cat.categories) == ["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"]
    dialogs = result.dialogs_frame()
    assert len(dialogs) == 40
    first = dialogs.iloc[0]
    turns = [t for t in result.turns if t.dialog_id == first["dialog_id"]]
    assert (
        first["score"]
        == (sum(t.meteor for t in turns) / len(turns) + sum(t.hidden_metric for t in turns) / len(turns)) / 2
    )
