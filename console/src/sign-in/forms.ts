/**
 * The sign-in page's forms, each at a fragment of its own, so that a link opens it, Back returns from
 * it and a reload keeps it; any other fragment shows the e-mail and password form.
 */
export const PASSWORD_FORM = '#sign-in'
export const KEY_FORM = '#api-key'
export const FORGOT_FORM = '#forgot-password'
