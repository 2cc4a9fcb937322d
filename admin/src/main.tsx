// The admin app's entry: the session of the cookie if there is one, else the sign-in screen.
import '@wordpress/theme/design-tokens.css';
import '@wordpress/components/build-style/style.css';
import './styles.css';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { preloadScreen } from './screens';

// The screen of the address (the overview, where signing in lands, for /admin/): fetch its chunk
// while the session is resumed, not after. Part of keeping every screen interactive within 1 s.
preloadScreen(window.location.pathname);

createRoot(document.getElementById('root')!).render(<App />);
