// Entry of the console bundle (built by src/console/console-bundle.ts).
import { render } from 'preact';
import { App } from './app.js';

render(<App />, document.getElementById('root')!);
