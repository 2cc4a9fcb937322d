// The admin app's entry: the session of the cookie if there is one, else the sign-in screen.
import '@wordpress/theme/design-tokens.css';
import '@wordpress/components/build-style/style.css';
import './styles.css';
import { createRoot } from 'react-dom/client';
import { App } from './app';

// Signing in lands on the overview: fetch its chunk while the session is resumed, not after (the
// lazy screen gets the same module). Part of keeping the overview interactive within 1 s.
if (/^\/admin\/?(overview\/?)?$/.test(window.location.pathname)) void import('./screens/overview');

createRoot(document.getElementById('root')!).render(<App />);
