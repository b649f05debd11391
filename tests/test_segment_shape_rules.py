"""The segment ops' shape rules (cc/ops/shape_checks.h: rules::UnsortedSegment,
SortedSegment, SparseSegment), written once for the kernels and the shape
functions, on the raw ops: each side words a rule as TensorFlow's op words it
on the same side (its kernels eagerly, its shape functions while a graph is
built), but where TensorFlow's shape function says less than its kernel (the
rule's own message then, on both sides)."""
import pytest
import tensorflow as tf

from tf_scatter_ops._base import library as _loader

D = tf.ones([3, 2])
S = tf.constant(1.0)  # data of rank 0

# (name, our raw op, TensorFlow's, inputs, where ours says what TensorFlow's
# does: "both", "eager" (ours says `graph_message` while the graph is built,
# None: nothing), or "eager only" (neither shape function checks it))
CASES = [
    ("sorted-ids-rank-2", "segment_sum", "SegmentSum",
     dict(data=D, segment_ids=[[0, 1, 2]]), "both", None),
    ("sorted-data-rank-0", "segment_sum", "SegmentSum",
     dict(data=S, segment_ids=[0]), "both", None),
    ("sorted-ids-length", "segment_sum", "SegmentSum",
     dict(data=D, segment_ids=[0, 1]), "eager only", None),
    ("sparse-num-rank-1", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=D, indices=[0, 1], segment_ids=[0, 1], num_segments=[2]), "both", None),
    ("sparse-indices-rank-2", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=D, indices=[[0, 1]], segment_ids=[0, 1], num_segments=2), "both", None),
    ("sparse-ids-rank-2", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=D, indices=[0, 1], segment_ids=[[0, 1]], num_segments=2), "both", None),
    ("sparse-data-rank-0", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=S, indices=[0], segment_ids=[0], num_segments=2), "both", None),
    ("sparse-lengths", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=D, indices=[0, 1, 2], segment_ids=[0, 1], num_segments=2), "eager",
     "segment_ids and indices should have same size."),
    # (ours takes -1 for "not given": a value below it fails when the graph runs)
    ("sparse-num-below-minus-1", "sparse_segment_sum", "SparseSegmentSumWithNumSegments",
     dict(data=D, indices=[0], segment_ids=[0], num_segments=-2), "eager", None),
    ("unsorted-num-rank-2", "unsorted_segment_sum", "UnsortedSegmentSum",
     dict(data=D, segment_ids=[0, 1, 2], num_segments=[[4]]), "eager",
     "num_segments should be a scalar, not shape [1,1]"),
    ("unsorted-not-a-prefix", "unsorted_segment_sum", "UnsortedSegmentSum",
     dict(data=D, segment_ids=[0, 1], num_segments=4), "eager",
     "data.shape = [3,2] does not start with segment_ids.shape = [2]"),
    ("unsorted-num-negative", "unsorted_segment_sum", "UnsortedSegmentSum",
     dict(data=D, segment_ids=[0, 1, 2], num_segments=-1), "both", None),
]


def bare(error):
    """The message alone: without TensorFlow's node, op and traceback text."""
    text = str(error).split(" for '{{node")[0].split(" [Op:")[0].split("}} ")[-1]
    return text.split("Error: ")[-1].strip()


def raised(call):
    try:
        call()
    except (tf.errors.InvalidArgumentError, ValueError) as e:
        return type(e), bare(e)
    return None, None


def graph(call):
    return lambda: tf.function(call).get_concrete_function()


@pytest.mark.parametrize("name,ours,theirs,inputs,alike,graph_message", CASES,
                         ids=[c[0] for c in CASES])
def test_each_side_words_a_rule_as_tensorflow(name, ours, theirs, inputs, alike, graph_message):
    lib = _loader.load()
    op = getattr(lib, "tf_scatter_" + ours)
    tf_op = getattr(tf.raw_ops, theirs)
    ours_eager = raised(lambda: op(**inputs))
    assert ours_eager[0] is tf.errors.InvalidArgumentError, ours_eager
    assert ours_eager == raised(lambda: tf_op(**inputs))
    ours_graph = raised(graph(lambda: op(**inputs)))
    theirs_graph = raised(graph(lambda: tf_op(**inputs)))
    if alike == "both":
        assert ours_graph == theirs_graph
    elif alike == "eager only":  # checked when the graph runs, on both
        assert ours_graph == theirs_graph == (None, None)
    else:
        assert theirs_graph[0] is ValueError
        assert ours_graph == ((ValueError, graph_message) if graph_message else (None, None))
