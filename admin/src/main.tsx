// The admin app's entry: the session of the cookie if there is one, else the sign-in screen.
import '@wordpress/theme/design-tokens.css';
import '@wordpress/components/build-style/style.css';
import './styles.css';
import { createRoot } from 'react-dom/client';
import { App } from './app';

createRoot(document.getElementById('root')!).render(<App />);
