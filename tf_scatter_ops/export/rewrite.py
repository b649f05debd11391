"""Rewrites a SavedModel that uses the plugin's ops into one that holds none,
for stock TensorFlow (TensorFlow Serving, a Python server without the
plugin), TFLite and ONNX converters (`tso.export.export(src, dst)`, or
`python -m tf_scatter_ops.export SRC DST`).

Every TfScatter> node, in every function of the model's library (the
signatures, the restored tf.functions, their loops and branches) and in the
top-level graph, becomes a call of a function that stock_ops() traces for
that node's input dtypes, shapes and attributes: TensorFlow's built-in ops
with the plugin's results for valid input (tf_scatter_ops/_dispatch/forms.py
says which). Node names, signatures, variables and assets are kept, so the
checkpoint is copied as it is.
"""

import os
import shutil
import types

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from tf_scatter_ops._base import table
from tf_scatter_ops._base.tf_private import (fingerprinting_utils, function_def_to_graph,
                                             handle_data_util)
from tf_scatter_ops._dispatch import backends, context, forms, messages

PREFIX = "TfScatter>"
_RESOURCE_SCATTERS = {"Resource" + row.variable: name
                      for name, row in table.VARIABLE_SCATTERS.items()}
_REF_SCATTERS = {row.variable for row in table.VARIABLE_SCATTERS.values()}
# The group-wise rows' fused gradient ops (<op>Grad), by op type.
_GROUPWISE_GRADS = {row.op + "Grad": row for row in table.GROUPWISE}


def export(src, dst):
    """Writes SavedModel `src` to `dst` (a new folder) with every TfScatter>
    op replaced by TensorFlow's ops. Returns {op type: how many replaced}."""
    if os.path.exists(dst) and os.listdir(dst):
        raise ValueError(f"export: {dst} exists and is not empty")
    pb = os.path.join(src, "saved_model.pb")
    if not os.path.exists(pb):
        raise ValueError(f"export: {src} holds no saved_model.pb (a saved_model.pbtxt is not "
                         f"supported)")
    model = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        model.ParseFromString(f.read())
    replaced = {}
    for meta_graph in model.meta_graphs:
        rewrite_graph_def(meta_graph.graph_def, replaced)
    shutil.copytree(src, dst, dirs_exist_ok=True,
                    ignore=lambda folder, names: [n for n in names if folder == src and n in (
                        "saved_model.pb", "fingerprint.pb")])
    with open(os.path.join(dst, "saved_model.pb"), "wb") as f:
        f.write(model.SerializeToString())
    _write_fingerprint(dst)
    return replaced


def rewrite_graph_def(graph_def, replaced=None):
    """Replaces every TfScatter> node of `graph_def` (a GraphDef and its
    function library) in place; counts the replacements by op type into
    `replaced`. Returns `replaced`."""
    replaced = {} if replaced is None else replaced
    _Rewriter(graph_def, replaced).run()
    left = sorted(graph_def_op_types(graph_def))
    if left:  # a bug of ours, never a silent partial export
        raise RuntimeError(f"export: {left} are left in the rewritten model (a bug of "
                           "tf_scatter_ops: please report it)")
    return replaced


def graph_def_op_types(graph_def):
    """The TfScatter> op types in `graph_def` and its function library."""
    types_ = {n.op for n in graph_def.node if n.op.startswith(PREFIX)}
    for fdef in graph_def.library.function:
        types_.update(n.op for n in fdef.node_def if n.op.startswith(PREFIX))
    return types_


def _write_fingerprint(dst):
    if fingerprinting_utils is not None:  # (older TensorFlows write none)
        fingerprinting_utils.write_fingerprint(dst)


class _Rewriter:
    """Replaces the TfScatter> nodes of one GraphDef and its library."""

    def __init__(self, graph_def, replaced):
        self.graph_def = graph_def
        self.replaced = replaced
        self.functions = {}  # what a replacement is traced for -> its function's name
        self.names = {f.signature.name for f in graph_def.library.function}

    def run(self):
        outer = tf.Graph()
        with outer.as_default():
            # registers the library, so that nested functions resolve
            tf.graph_util.import_graph_def(self.graph_def, name="")
            for fdef in list(self.graph_def.library.function):
                nodes = [n for n in fdef.node_def if n.op.startswith(PREFIX)]
                if nodes:
                    graph = function_def_to_graph.function_def_to_graph(fdef)
                    for node in nodes:
                        self._replace(node, graph, fdef.signature.name)
                        _renumber_outputs(fdef, node, graph.get_operation_by_name(node.name))
            for node in self.graph_def.node:
                if node.op.startswith(PREFIX):
                    self._replace(node, outer, "the top-level graph")

    def _replace(self, node, graph, where):
        op = graph.get_operation_by_name(node.name)
        op_type = node.op[len(PREFIX):]
        try:
            function = self._function(op_type, node, op)
        except (ValueError, TypeError) as e:
            raise ValueError(f"export: {node.op} node {node.name!r} in {where}: {e}") from e
        stateful = function.signature.is_stateful
        call = type(node)(name=node.name, device=node.device, input=node.input,
                          op="StatefulPartitionedCall" if stateful else "PartitionedCall")
        call.attr["Tin"].list.type.extend(t.dtype.as_datatype_enum for t in op.inputs)
        call.attr["Tout"].list.type.extend(t.dtype.as_datatype_enum for t in op.outputs)
        call.attr["f"].func.name = function.signature.name
        for attr in ("config", "config_proto", "executor_type"):
            call.attr[attr].s = b""
        if "_output_shapes" in node.attr:
            call.attr["_output_shapes"].CopyFrom(node.attr["_output_shapes"])
        node.CopyFrom(call)
        self.replaced[op_type] = self.replaced.get(op_type, 0) + 1

    def _function(self, op_type, node, op):
        """The FunctionDef (added to the library once per distinct input
        signature and attributes) that computes `op` with TensorFlow's ops."""
        attrs = {k: node.attr[k] for k in ("bad_indices_policy", "use_locking", "dtype", "ddof",
                                           "reduce", "weighted", "op")
                 if k in node.attr}
        policy = attrs["bad_indices_policy"].s.decode() if "bad_indices_policy" in attrs else ""
        specs = [tf.TensorSpec(t.shape, t.dtype) for t in op.inputs]
        static = [_small_static(t) for t in op.inputs]
        key = (op_type, policy, tuple(sorted((k, v.SerializeToString()) for k, v in attrs.items())),
               tuple((tuple(s.shape.as_list()) if s.shape.rank is not None else None, s.dtype.name)
                     for s in specs), tuple(static))
        if key not in self.functions:
            body = self._body(op_type, node, op, policy, static)
            handles = _handle_data(node, op)

            def traced(*args):
                for i, data in handles.items():
                    # the variable's dtype and shape, which the ops' shape functions read
                    handle_data_util.set_handle_data(args[i], data)
                with context.stock_ops():
                    return body(*args)
            concrete = tf.function(traced, autograph=False).get_concrete_function(*specs)
            self.functions[key] = self._add(concrete)
        return self.functions[key]

    def _body(self, op_type, node, op, policy, static):
        """The function of the node's inputs that computes it inside
        stock_ops(): the dispatch's STOCK backend for the op."""
        names = [arg.name for arg in op.op_def.input_arg]
        ddof = node.attr["ddof"].i if "ddof" in node.attr else 0
        if op_type in _GROUPWISE_GRADS:  # TensorFlow's gradient of the composed function
            py = _GROUPWISE_GRADS[op_type].py

            def body(data, output, grad, ids, num_segments):
                return backends.run_groupwise_grad(py, data, output, grad, ids, num_segments,
                                                   ddof, policy)
            return body
        def attr(name, default):  # a SavedModel leaves out attrs at their defaults
            if name not in node.attr:
                return default
            value = node.attr[name]
            return value.s.decode() if value.HasField("s") else value.b

        if op_type == "GatherReduce":
            reduce, weighted = attr("reduce", "sum"), attr("weighted", False)

            def body(params, src, dst, num_segments, weights):
                return messages.composed_gather_reduce(params, src, dst, num_segments,
                                                      weights if weighted else None, reduce,
                                                      policy)
            return body
        if op_type == "EdgeCombine":
            edge_op = attr("op", "add")

            def body(a, b, src, dst):
                return messages.composed_edge_combine(a, b, src, dst, edge_op, policy)
            return body
        if op_type in table.BY_OP:
            row = table.BY_OP[op_type]
            num = dict(zip(names, static)).get("num_segments")

            def body(*args):
                inputs = dict(zip(names, args))
                if row.kind == "SparseSegment" and num is not None and num < 0:
                    del inputs["num_segments"]  # the kernel's "none given"
                elif row.kind == "SparseSegment" and num is None:
                    n, ids = inputs["num_segments"], inputs["segment_ids"]
                    last = tf.cast(forms.segments_to_last_id(forms.wide(ids)), n.dtype)
                    inputs["num_segments"] = tf.where(n < 0, last, n)
                if row.kind == "Groupwise":
                    inputs["ddof"] = ddof
                return backends.run(row.py, policy, **inputs)
            return body
        if op_type in _RESOURCE_SCATTERS:
            use_locking = node.attr["use_locking"].b if "use_locking" in node.attr else True

            def body(handle, indices, updates):
                variable = types.SimpleNamespace(handle=handle)  # what the stock form reads
                backends.scatter_variable(_RESOURCE_SCATTERS[op_type], variable, indices,
                                          updates, use_locking, policy)  # no output, as ours
            return body
        if op_type == "ResourceGatherNd":
            dtype = tf.as_dtype(node.attr["dtype"].type)

            def body(handle, indices):
                return backends.read_rows(handle, dtype, indices, policy)
            return body
        if op_type in _REF_SCATTERS:
            raise ValueError("TensorFlow 1.x reference variables are not exported; save the "
                             "model with resource variables (TensorFlow 2's default)")
        raise ValueError("not an op this version of tf_scatter_ops knows")

    def _add(self, concrete):
        """Adds the traced function and the functions it calls (loops,
        branches) to the library under names of their own; returns the
        FunctionDef of the traced function."""
        fdefs = [concrete.function_def] + list(concrete.graph.as_graph_def().library.function)
        renamed = {}
        for fdef in fdefs:
            name, i = "tso_stock_" + fdef.signature.name, 0
            while name in self.names:
                i += 1
                name = f"tso_stock{i}_{fdef.signature.name}"
            self.names.add(name)
            renamed[fdef.signature.name] = name
        added = []
        for fdef in fdefs:
            if renamed[fdef.signature.name] in {f.signature.name for f in added}:
                continue
            copy = self.graph_def.library.function.add()
            copy.CopyFrom(fdef)
            copy.signature.name = renamed[fdef.signature.name]
            for n in copy.node_def:
                _rename_calls(n, renamed)
            added.append(copy)
        return added[0]


def _renumber_outputs(fdef, node, op):
    """In a function, an op's outputs are named by its output args
    (node:positions:0); the call that replaces it has one list output
    (node:output:1). Renames the references of the function's nodes and
    results to a replaced op with more than one output."""
    names = [arg.name for arg in op.op_def.output_arg]
    if len(names) < 2:
        return
    renamed = {f"{node.name}:{name}:0": f"{node.name}:output:{i}" for i, name in enumerate(names)}
    for n in fdef.node_def:
        n.input[:] = [renamed.get(x, x) for x in n.input]
    for key, value in list(fdef.ret.items()):
        fdef.ret[key] = renamed.get(value, value)


def _handle_data(node, op):
    """The handle data (the variable's dtype and shape) of each resource input
    of `op`: its own, or the value dtype with an unknown shape."""
    handles = {}
    for i, t in enumerate(op.inputs):
        if t.dtype == tf.resource:
            data = handle_data_util.get_handle_data(t)
            if data is None or not data.is_set:
                dtype = tf.as_dtype(node.attr["dtype" if "dtype" in node.attr else "T"].type)
                data = handle_data_util.create_handle_data(tf.TensorShape(None), dtype)
            handles[i] = data
    return handles


def _rename_calls(node, renamed):
    for value in node.attr.values():
        if value.HasField("func") and value.func.name in renamed:
            value.func.name = renamed[value.func.name]
        if value.HasField("list"):
            for func in value.list.func:
                if func.name in renamed:
                    func.name = renamed[func.name]
    if node.op in renamed:  # a function called by its name as the op type
        node.op = renamed[node.op]


def _small_static(tensor):
    """A scalar input's value when it is known (num_segments), else None."""
    if tensor.shape.rank != 0 or not tensor.dtype.is_integer:
        return None
    value = tf.get_static_value(tensor)
    return None if value is None else int(value)
