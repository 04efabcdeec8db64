"""Textual's `Button` with only the styles the assistant's buttons use.

Why it exists: `Button`'s own CSS (every variant, flat and ANSI styles: 7 kB, near half
of the first screen's CSS) is parsed before the first frame. `StartButton` is the same
widget (label, keys, clicks, `Button.Pressed`) with the default and primary variants'
rules of that CSS, copied as they are, and none of the rest.
"""

from __future__ import annotations

from textual.widgets import Button


class StartButton(Button, inherit_css=False):
    """A `Button` of the default or primary variant, styled as Textual styles them."""

    DEFAULT_CSS = """
    StartButton {
        width: auto;
        min-width: 16;
        height:auto;
        line-pad: 1;
        text-align: center;
        content-align: center middle;
        pointer: pointer;
        background: transparent;

        &.-style-default {
            text-style: bold;
            color: $button-foreground;
            background: $surface;
            border: none;
            border-top: tall $surface-lighten-1;
            border-bottom: tall $surface-darken-1;
            &.-textual-compact {
                border: none !important;
            }
            &:disabled {
                text-opacity: 0.6;
                pointer: not-allowed;
            }
            &:focus {
                text-style: $button-focus-text-style;
                background-tint: $foreground 5%;
            }
            &:hover {
                border-top: tall $surface;
                background: $surface-darken-1;
            }
            &.-active {
                background: $surface;
                border-bottom: tall $surface-lighten-1;
                border-top: tall $surface-darken-1;
                tint: $background 30%;
            }
            &.-primary {
                color: $button-color-foreground;
                background: $primary;
                border-top: tall $primary-lighten-3;
                border-bottom: tall $primary-darken-3;
                &:hover {
                    background: $primary-darken-2;
                    border-top: tall $primary;
                }
                &.-active {
                    background: $primary;
                    border-bottom: tall $primary-lighten-3;
                    border-top: tall $primary-darken-3;
                }
            }
        }
    }
    """
