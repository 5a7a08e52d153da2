// JSX-like templates without a compiler: htm bound to Preact.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
