"""The small modal dialogs: confirm, name, name link, password, trust, alert, unreachable."""

from __future__ import annotations

import contextlib
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from protocol.messages import (
    MAX_NAME,
    normalize_name,
)

from ..config import LOCAL_WHERE
from ..host import host
from ..invite import name_link


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: y or Enter says yes, n or Esc no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Container(id="confirm-box"):
            yield Static(Text(self.question, style="bold"), id="question")
            with Horizontal(classes="row"):
                yield Button("Yes (y)", compact=True, variant="error", id="yes")
                yield Button("No (n)", compact=True, id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class _AskScreen(ModalScreen[str]):
    """A box that asks for one line before anything else can happen (a name, a password):
    the problem that brought it up, what to type and why, and Esc to quit."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "quit", "quit")]
    #: The box's title, the input's id (the problem line's is ``<FIELD>-problem``), what
    #: the box explains once, and how the input looks.
    BOX_TITLE: ClassVar[str]
    FIELD: ClassVar[str]
    EXPLAIN: ClassVar[str]
    PLACEHOLDER: ClassVar[str]
    SECRET: ClassVar[bool] = False
    MAX_LENGTH: ClassVar[int] = 0

    def __init__(self, where: str, problem: str) -> None:
        super().__init__()
        self.where = where
        self.problem = problem

    def compose(self) -> ComposeResult:
        with Container(id="name-box") as box:
            box.border_title = self.BOX_TITLE
            yield Static(Text(self.problem, style="bold #d7af00"), id=f"{self.FIELD}-problem")
            yield Static(self.explain(), id=f"{self.FIELD}-explain")
            yield Input(
                placeholder=self.PLACEHOLDER,
                password=self.SECRET,
                max_length=self.MAX_LENGTH,
                id=self.FIELD,
            )
            yield Static(Text("Esc quits", style="#8a8a8a"))

    def action_quit(self) -> None:
        self.app.exit()

    def explain(self) -> str:
        """What the box explains, for this server."""
        return self.EXPLAIN

    def accept(self, value: str) -> str | None:
        """What the typed line gives, or None to keep asking."""
        return value or None

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input.id == self.FIELD and (value := self.accept(event.value)):
            self.dismiss(value)


class NameScreen(_AskScreen):
    """The first time on a server (or when a name is refused): choose a name. The limit
    is said as the player types (a counter, and a word when it is reached: the box takes
    no more), and a name the server would refuse (blank, say) is refused here, saying why."""

    BOX_TITLE = "Your name"
    FIELD = "name"
    # The problem line says where and why: this says the rest once.
    EXPLAIN = (
        f"Others see this name (1-{MAX_NAME} characters). It is yours from now on:"
        " the next start needs no name. Yours already, on another device? Run"
        " yukon play with that name's link (its lobby's i shows it)."
    )
    #: ``yukon play --local``: a server of the player's own, in this process, where
    #: nobody else sees anything (its port changes every run; no other machine reaches it).
    EXPLAIN_LOCAL = (
        f"Your name on your own server (1-{MAX_NAME} characters), which runs in this"
        " process: nobody else plays here, so it is only what your results and boards"
        " show. It is kept: the next start needs no name."
    )
    PLACEHOLDER = "name, then Enter"
    MAX_LENGTH = MAX_NAME

    def explain(self) -> str:
        return self.EXPLAIN_LOCAL if self.where == LOCAL_WHERE else self.EXPLAIN

    def on_mount(self) -> None:
        box = self.query_one("#name-box")
        box.mount(Static(self._count(""), id="name-count"), after=self.query_one("#name"))

    @staticmethod
    def _count(value: str) -> Text:
        n = len(value)
        if n >= MAX_NAME:  # the box takes no more: say so, rather than drop keys silently
            return Text(
                f"{n}/{MAX_NAME}: a name is at most {MAX_NAME} characters", style="bold #d7af00"
            )
        return Text(f"{n}/{MAX_NAME} characters", style="#8a8a8a")

    @on(Input.Changed, "#name")
    def _typed(self, event: Input.Changed) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#name-count", Static).update(self._count(event.value))

    def accept(self, value: str) -> str | None:
        if not value.strip():
            problem = "a name cannot be blank: type at least one character, then Enter"
        else:
            try:
                return normalize_name(value)
            except ValueError as exc:
                problem = f"that name will not do: {exc}"
        self.query_one("#name-problem", Static).update(Text(problem, style="bold #ff5f5f"))
        return None


class NameLinkScreen(ModalScreen[None]):
    """``i`` in the lobby: this name's link, to use the name on another device (the token
    in the link's fragment, docs/protocol.md 4.2); ``c`` copies it. Anyone with the link
    is this player, which the screen says plainly."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "copy"),
        Binding("escape", "close", "close"),
        Binding("q", "close", "close", show=False),
        Binding("i", "close", "close", show=False),
    ]

    def link(self) -> str | None:
        client = host(self)
        token = client.session.token
        if token is None or client.where == LOCAL_WHERE:
            return None
        try:
            return name_link(client.url, token)
        except ValueError:
            return None

    def compose(self) -> ComposeResult:
        client = host(self)
        link = self.link()
        with Container(id="link-box") as box:
            box.border_title = "Your name on another device"
            if link is None:
                why = (
                    "your own server (--local) has no address another device could use"
                    if client.where == LOCAL_WHERE
                    else "not connected yet: the server has not said who you are"
                )
                yield Static(Text(f"No link: {why}.", style="bold #d7af00"))
            else:
                yield Static(
                    f"To race as {client.session.me} on another device, open this link there"
                    " in a browser, or run yukon play LINK:"
                )
                yield Static(Text(link, style="bold #87d7ff"), id="name-link")
                yield Static(
                    Text(
                        "Anyone with this link plays as you: keep it to yourself.",
                        style="bold #ff5f5f",
                    )
                )
            yield Static(Text("c copies it · Esc closes", style="#8a8a8a"))

    def action_copy(self) -> None:
        link = self.link()
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        client = host(self)
        client.session.say("copied your name's link, if the terminal allows it")
        client.sync()

    def action_close(self) -> None:
        self.dismiss()


class PasswordScreen(_AskScreen):
    """A private server, and this client has no password for it (or a wrong one)."""

    BOX_TITLE = "Password"
    FIELD = "password"
    EXPLAIN = (
        "Ask whoever runs it for the password. It is kept for this server:"
        " the next start needs it no more (or give --password)."
    )
    PLACEHOLDER = "password, then Enter"
    SECRET = True


class TrustScreen(ModalScreen[bool]):
    """A wss:// server whose certificate no authority vouches for, the first time: its
    fingerprint, to compare with the one its ``yukon serve`` logged. y trusts (and pins)
    it, n quits without a word sent to the server."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, where: str, problem: str, fingerprint: str) -> None:
        super().__init__()
        self.where = where
        self.problem = problem
        self.fingerprint = fingerprint

    def compose(self) -> ComposeResult:
        pairs = self.fingerprint.split(":")
        half = (len(pairs) + 1) // 2
        shown = ":".join(pairs[:half]) + ":\n" + ":".join(pairs[half:])
        with Container(id="name-box") as box:
            box.border_title = "A certificate to trust?"
            yield Static(Text(self.problem, style="bold #d7af00"))
            yield Static(Text("\nIts SHA-256 fingerprint:", style="#8a8a8a"))
            yield Static(Text(shown, style="bold"), id="fingerprint")
            yield Static(
                "\nCompare it with the one the server logged when it started (ask whoever"
                " runs it). Trust it on this server from now on? A later change is refused."
                " (Or start with --cafile.)"
            )
            with Horizontal(classes="row"):
                yield Button("Trust (y)", compact=True, variant="warning", id="yes")
                yield Button("Quit (n)", compact=True, id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class AlertScreen(ModalScreen[None]):
    """Something that stopped the client for good and must not go unread (a server's
    certificate changed): the whole text, whatever the width; any of Esc, q, Enter quits."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "quit", "quit"),
        Binding("q", "quit", "quit"),
        Binding("enter", "quit", "quit"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Container(id="name-box") as box:
            box.border_title = self.title_text
            yield Static(Text(self.text, style="bold #ff5f5f"))
            yield Static(Text("\nEsc quits", style="#8a8a8a"))

    def action_quit(self) -> None:
        self.app.exit(return_code=1, message=self.text)


class UnreachableScreen(ModalScreen[None]):
    """Nothing answers at the address given (no server, a wrong port), or an invite link's
    room cannot be reached for that reason: said at once, over the lobby, rather than a
    lobby that looks usable and a box that asks a name for a server nobody runs (issue
    42). The client keeps trying; the box closes by itself once the server answers. Esc
    waits in the lobby, q quits."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Container(id="name-box") as box:
            box.border_title = self.title_text
            yield Static(Text(self.text, style="bold #ff5f5f"), id="unreachable-text")
            yield Static(
                "Check the address (yukon play HOST:PORT, or the http:// address the server"
                " logs when it starts) and that its server runs. This client tries again by"
                " itself and closes this box once the server answers."
            )
            yield Static(Text("Esc waits in the lobby · q quits", style="#8a8a8a"))

    def on_mount(self) -> None:
        # The app dismisses it when the server answers; an answer that came while the
        # box was still being pushed is seen here.
        self.set_interval(0.2, self._check)
        self._check()

    def _check(self) -> None:
        kind = host(self).link_state.kind
        if kind not in ("connecting", "retrying") and self.is_current:
            self.dismiss()

    def update(self, text: str) -> None:
        """The latest attempt's outcome (the wait before the next one changes)."""
        self.text = text
        with contextlib.suppress(NoMatches):
            self.query_one("#unreachable-text", Static).update(Text(text, style="bold #ff5f5f"))

    def action_close(self) -> None:
        self.dismiss()
