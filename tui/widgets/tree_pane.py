"""TreePane: where the time goes as a call tree (analysis/call_tree.py), top-down, bottom-up or
by module, weighted by CPU or GPU time, over the scopes the stats pane has; the heaviest path
is open, enter goes to a node's longest slice on the timeline."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static, Tree
from textual.widgets.tree import TreeNode

from tui.model.analysis.call_tree import VIEWS, CallTree, tree_for
from tui.model.present.scopes import next_scope, scope_named
from tui.model.present.tree_report import chain, chain_label, empty_reason
from tui.model.text import counted, printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.widgets.flame_view import FlameView
from tui.widgets.focus import focus_now, is_focused
from tui.widgets.key_footer import TextBox
from tui.widgets.pane import Pane, PaneContext, SlicesChosen

SHOWN_CHILDREN = 200  # children listed per node (the rest summed on one line)


class TreePane(Pane):
    """The call tree of a scope; its nodes are filled in as they are opened."""

    DEFAULT_CSS = """
    TreePane { height: 50%; min-height: 12; border-top: solid $primary; }
    TreePane > #tree-head { height: auto; max-height: 3; padding: 0 1; background: $boost; }
    TreePane > Tree { height: 1fr; }
    TreePane > FlameView { display: none; }
    TreePane.flame > FlameView { display: block; }
    TreePane.flame > Tree { display: none; }
    TreePane > #flame-search { height: 1; border: none; padding: 0 1; display: none; }
    TreePane.searching > #flame-search { display: block; }
    """
    FOCUS: ClassVar[str] = "#calls"  # what takes the keys when the pane opens
    HELP_TITLE = "Call tree"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "toggle_weight", "CPU/GPU time"),
        Binding("u", "next_view", "Next view"),
        Binding("v", "next_scope", "Tree scope"),
        Binding("f", "toggle_flame", "Tree / flame view"),
        Binding("slash", "search", "Highlight frames"),
        Binding("escape", "leave", "Close the tree", show=False),
    ]

    @classmethod
    def opened(cls, at: PaneContext) -> TreePane | str:
        return cls(at.trace, at.window, at.selected, at.marked)

    def __init__(
        self,
        trace: Trace,
        window: tuple[int, int],
        selected: int = -1,
        marked: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        self.trace = trace
        self.window, self.selected, self.marked = window, selected, marked
        self.weight = "gpu" if trace.kind_mask("gpu").any() else "cpu"
        self.view = "top-down"
        self.scope_name = "trace"
        picked = scope_named(trace, "trace", window, selected, marked)
        self.scope, self.scope_label = picked.scope, picked.label
        self.calls: CallTree | None = None
        self.generation = 0  # of the tree asked for: a late thread's tree is dropped

    def compose(self) -> ComposeResult:
        yield Static(id="tree-head")
        tree: Tree[int] = Tree("(all)", id="calls")
        tree.auto_expand = False  # enter jumps; space opens and closes
        yield tree
        yield FlameView(None, id="flame")
        yield TextBox(
            [("enter", "Back to the flame view (the highlight stays)"), ("escape", "Back")],
            placeholder="highlight frames whose name holds…",
            id="flame-search",
            select_on_focus=True,
        )

    @guarded
    def on_mount(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """The tree of the view, weight and scope chosen: built in a thread (a second or so
        for a million slices, the first time), then shown; a newer choice wins."""
        self.generation += 1
        generation = self.generation
        view, weight, scope = self.view, self.weight, self.scope
        self.query_one("#tree-head", Static).update(Text(" building the call tree…"))

        def build() -> None:
            found = tree_for(self.trace, view, scope, weight)
            try:
                self.app.call_from_thread(self._built, generation, found)
            except RuntimeError:  # the app closed meanwhile
                return

        self.run_worker(build, thread=True, group="call tree", exit_on_error=False)

    @guarded
    def _built(self, generation: int, found: CallTree) -> None:
        trees = self.query("#calls")
        # A pane closed while it built is being taken apart, a part at a time: drop the build.
        parts = (trees, self.query("#tree-head"), self.query(FlameView))
        if not all(parts) or generation != self.generation or not self.is_attached:
            return
        widget: Tree[int] = trees.first(Tree)
        self.calls = found
        for flame in self.query(FlameView):  # first: the head describes its frame
            if flame.calls is not found:
                flame.show(found)
        root = int(found.total[0])
        self.rebuild_head()
        widget.clear()
        widget.root.set_label(self._label(found, [0], root))
        widget.root.data = 0
        self._fill(widget.root, found, 0, root)
        widget.root.expand()
        self._open_heaviest(widget, found)
        self._focus_view()

    def _focus_view(self) -> None:
        """The view shown takes the keys from the other one; a search box typed into, or the
        timeline tabbed to, keeps them (keys typed while the tree built)."""
        tree, flame = self.query_one("#calls", Tree), self.query_one(FlameView)
        if is_focused(tree) or is_focused(flame):
            focus_now(flame if self.has_class("flame") else tree)

    def _label(self, found: CallTree, nodes: list[int], root: int) -> Text:
        last = nodes[-1]
        total = int(found.total[last])
        share = total / root if root else 0.0
        text = Text(f"{format_duration(total):>8} {share:6.1%}  ", style="bold")
        text.append(f"self {format_duration(int(found.self_[last])):>8}  ", style="dim")
        text.append(printable(chain_label(found, nodes) if last else "(all)"))
        if last and not found.is_thread(last):
            text.append(f"  ×{int(found.calls[last]):,}", style="dim")
        return text

    def _fill(self, parent: TreeNode[int], found: CallTree, node: int, root: int) -> None:
        """The children of `node` under `parent`, each a chain of frames holding all of their
        parent's weight joined in one line; a child's own children come when it is opened."""
        kids = [k for k in found.children(node) if found.total[k]]
        for k in kids[:SHOWN_CHILDREN]:
            nodes = chain(found, k)
            last = nodes[-1]
            leaf = not any(found.total[g] for g in found.children(last))
            label = self._label(found, nodes, root)
            if leaf:
                parent.add_leaf(label, data=last)
            else:
                parent.add(label, data=last)
        if len(kids) > SHOWN_CHILDREN:
            rest = sum(int(found.total[k]) for k in kids[SHOWN_CHILDREN:])
            more = f"({len(kids) - SHOWN_CHILDREN:,} more, {format_duration(rest)})"
            parent.add_leaf(Text(more, style="dim"), data=-1)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[int]) -> None:
        event.stop()
        node = event.node
        if self.calls is not None and not node.children and node.data is not None:
            self._fill(node, self.calls, node.data, int(self.calls.total[0]))

    def _open_heaviest(self, widget: Tree[int], found: CallTree) -> None:
        """Down the heaviest child each time, opening as it goes; the cursor ends there."""
        at = widget.root
        while at.children:
            first = at.children[0]
            if first.data is None or first.data < 0:
                break
            if first.allow_expand:
                first.expand()
                if not first.children:
                    self._fill(first, found, first.data, int(found.total[0]))
            at = first
            if not first.allow_expand:
                break
        # A node has its line once the tree is laid out.
        self.call_after_refresh(widget.move_cursor, at)

    def on_tree_node_selected(self, event: Tree.NodeSelected[int]) -> None:
        event.stop()
        if self.calls is None or event.node.data is None or event.node.data <= 0:
            return
        row = int(self.calls.longest[event.node.data])
        if row >= 0:
            self.post_message(SlicesChosen(np.asarray([row], np.int64), mark=False, jump=True))

    def follow(
        self, window: tuple[int, int], selected: int, marked: tuple[int, int] | None
    ) -> None:
        self.window, self.selected, self.marked = window, selected, marked

    @guarded
    def action_toggle_weight(self) -> None:
        self.weight = "cpu" if self.weight == "gpu" else "gpu"
        self.rebuild()

    @guarded
    def action_next_view(self) -> None:
        self.view = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        self.rebuild()

    @guarded
    def action_next_scope(self) -> None:
        picked = scope_named(
            self.trace, next_scope(self.scope_name), self.window, self.selected, self.marked
        )
        self.scope_name, self.scope_label, self.scope = picked.name, picked.label, picked.scope
        self.rebuild()

    def action_toggle_flame(self) -> None:
        self.toggle_class("flame")
        self._focus_view()  # now: a `tab` typed next leaves the view shown
        self.refresh_bindings()  # `/` searches the flame view only
        self.rebuild()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Outside the flame view `/` is the timeline's search, as anywhere else: the key goes on
        # to the screen's binding.
        return self.has_class("flame") if action == "search" else True

    def action_search(self) -> None:
        self.add_class("searching")
        focus_now(self.query_one("#flame-search", Input))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one(FlameView).set_search(event.value)
        self.rebuild_head()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        focus_now(self.query_one(FlameView))

    def on_flame_view_frame_chosen(self, event: FlameView.FrameChosen) -> None:
        event.stop()
        self.rebuild_head()

    def rebuild_head(self) -> None:
        """The head: what the tree is, then in the flame view the frame under the cursor and
        what the search highlights, in the tree its keys; and why an empty tree is empty."""
        found = self.calls
        if found is None:
            return
        head = Text(f" {self.view} · {self.weight.upper()} time · scope ", style="bold reverse")
        head.append(f"{printable(self.scope_label)} ", style="bold reverse")
        head.append(f"  {format_duration(int(found.total[0]))} in all   ")
        if self.has_class("flame"):
            flame = self.query_one(FlameView)
            head.append(printable(flame.describe()))
            if flame.search:
                held = f"{counted(flame.matches(), 'frame')} hold{'s' * (flame.matches() == 1)}"
                head.append(f"   {held} “{printable(flame.search)}”")
            head.append("   (arrows move, enter zooms in, backspace out, / highlights, f tree)")
        else:
            head.append("x CPU/GPU  u view  v scope  f flame  space open/close  enter: longest")
        why = empty_reason(self.trace, found, self.view)
        if why is not None:
            head.append(f"\n {why}", style="bold")
        self.query_one("#tree-head", Static).update(head)

    def action_leave(self) -> None:
        """Escape: out of the search to the flame view, then the highlight goes, then the pane
        closes."""
        flame = self.query_one(FlameView)
        if self.has_class("searching") and is_focused(self.query_one("#flame-search", Input)):
            self.remove_class("searching")
            focus_now(flame)
            return
        if self.has_class("flame") and flame.search:
            self.query_one("#flame-search", Input).value = ""
            flame.set_search("")
            self.rebuild_head()
            return
        self.dismiss()
